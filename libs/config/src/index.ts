export * from './api-keys';
export * from './app-config';
export * from './errors';
export * from './limit-rules';
export * from './resolve-limits';
export * from './package-version';
export * from './history-settings';
export * from './shell-sandbox-settings';
