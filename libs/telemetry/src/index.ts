export * from './logger';
export * from './graceful-shutdown';
export * from './metrics';
