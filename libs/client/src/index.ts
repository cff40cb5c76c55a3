export * from './codemode-client';
export * from './errors';
export * from './sse';
