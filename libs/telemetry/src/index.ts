export * from './logger';
export * from './log-context';
export * from './graceful-shutdown';
export * from './unhandled-rejections';
export * from './metrics';
