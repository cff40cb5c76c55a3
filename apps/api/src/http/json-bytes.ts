import { jsonNestsDeeperThan } from '@codemode/contracts';

/** A JSON body as read from its bytes (on the event loop when small, else on a body thread). */
export type ParsedJson = { kind: 'json'; value: unknown } | { kind: 'empty' } | { kind: 'invalid_json' } | { kind: 'too_deep' };

/**
 * SPEC §10 "Depth": the nesting is measured on the bytes, before `JSON.parse`, so no body deeper
 * than the bound ever reaches a parser, schema or serializer that recurses.
 */
export function parseJsonBytes(bytes: Uint8Array): ParsedJson {
  if (bytes.length === 0) return { kind: 'empty' };
  if (jsonNestsDeeperThan(bytes)) return { kind: 'too_deep' };
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  if (text.trim() === '') return { kind: 'empty' };
  try {
    return { kind: 'json', value: JSON.parse(text) as unknown };
  } catch {
    return { kind: 'invalid_json' };
  }
}
