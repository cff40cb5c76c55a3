export * from './codemode-client';
export * from './errors';
