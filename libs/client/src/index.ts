export * from './codemode-client';
export * from './errors';
export * from './sse';
export type { RawResponse } from './rest-connection';
// The request and answer types of every method (the zod-inferred types of @codemode/contracts), so
// a user of the package imports them from the client it calls.
export type * from '@codemode/contracts';
