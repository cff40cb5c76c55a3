export * from './logger';
export * from './graceful-shutdown';
export * from './unhandled-rejections';
export * from './metrics';
