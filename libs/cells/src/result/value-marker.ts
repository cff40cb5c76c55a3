import { MAX_REFERENCE_DESCRIPTOR_BYTES, REFERENCE_GUIDANCE } from './truncation-text';
import { jsonBytes, longestFittingPrefix, utf8Bytes } from './utf8-json';

/** What an oversized completed value is replaced by (SPEC §3 Output). */
export type PrefixMarker = { truncated: true; omittedBytes: number; guidance: string; prefix: string };
export type ReferenceMarker = { truncated: true; reference: Record<string, unknown>; guidance: string };

/** Compact JSON of an object or array: only those may become a results reference. */
export function isContainerJson(valueJson: string): boolean {
  const first = valueJson.trimStart().charAt(0);
  return first === '{' || first === '[';
}

/**
 * `{truncated, omittedBytes, guidance, prefix}` with the longest UTF-8-safe prefix of the compact
 * JSON that keeps the whole marker within `limitBytes`; null when not even an empty prefix fits.
 * `omittedBytes` is the UTF-8 size of the JSON left out.
 */
export function prefixMarker(valueJson: string, guidance: string, limitBytes: number): PrefixMarker | null {
  const totalBytes = utf8Bytes(valueJson);
  const marker = (prefix: string): PrefixMarker => ({
    truncated: true,
    omittedBytes: totalBytes - utf8Bytes(prefix),
    guidance,
    prefix,
  });
  const fits = (prefix: string): boolean => jsonBytes(marker(prefix)) <= limitBytes;
  if (!fits('')) return null;
  // Each UTF-16 unit of prefix costs at least one byte, which bounds the search range.
  const prefix = longestFittingPrefix(valueJson.slice(0, Math.max(0, limitBytes)), fits);
  return marker(prefix);
}

/** Smallest allowance in which a reference marker with a maximal descriptor surely fits. */
export const REFERENCE_MARKER_RESERVE =
  jsonBytes({ truncated: true, reference: {}, guidance: REFERENCE_GUIDANCE }) + MAX_REFERENCE_DESCRIPTOR_BYTES;

export function referenceMarker(reference: Record<string, unknown>): ReferenceMarker {
  return { truncated: true, reference, guidance: REFERENCE_GUIDANCE };
}
