/**
 * One example of a body or an answer in the OpenAPI document. Typed with the contract types
 * where it is written, and parsed with the contract schemas in `openapi-document.spec.ts`.
 */
export interface Example {
  summary: string;
  value: unknown;
}
