import { StoreValueNotSerializableError } from './errors';

/** Bytes of a string as UTF-8: what every JSON size limit here counts. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * A value's compact JSON text: the detached form the store keeps. Like OpenClaw, a value JSON
 * has no text for (a function, a symbol) is stored as `null`; a cycle or a BigInt is refused.
 */
export function toJsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch (err) {
    throw new StoreValueNotSerializableError(err instanceof Error ? err.message : String(err));
  }
}
