/** Injection tokens of the API's shared providers. */
export const APP_CONFIG = Symbol('APP_CONFIG');
export const LOGGER = Symbol('LOGGER');
export const REDIS = Symbol('REDIS');
