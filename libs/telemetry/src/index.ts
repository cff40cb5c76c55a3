export * from './logger';
export * from './graceful-shutdown';
