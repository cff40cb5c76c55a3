import { FULL_PREVIEW_BYTES, MAX_DESCRIPTOR_BYTES } from '../limits';
import { StoreArgumentError } from '../errors';
import { escapedBytes, fitEscaped, utf8Prefix } from './json-fit';
import { describeShape } from './shape';

/**
 * What `results.save` answers and an oversized final value carries as its `reference`
 * (SPEC §3, §4). At most 768 bytes of UTF-8 JSON.
 */
export interface ResultDescriptor {
  /** `result_<uuid>`: what `results.load` and `results.delete` take. */
  id: string;
  /** Bytes of the saved value's UTF-8 JSON. */
  bytes: number;
  /** Array length, object key count, or 1. */
  count: number;
  /** Kind first, then a bounded structural sketch (see shape.ts); may end with '…' when cut. */
  shape: string;
  /** The value's compact JSON when it is at most 256 bytes, else a UTF-8-safe prefix of it. */
  preview: string;
  /** True when `preview` is not the whole JSON. */
  previewTruncated: boolean;
}

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

/**
 * Builds the descriptor of a saved value from its JSON text and the parsed value. The identity
 * fields (id, bytes, count) are always whole; shape and preview shrink to fit 768 bytes, the
 * shape keeping at least a third of the room it needs, the preview taking the rest.
 */
export function describeResult(id: string, json: string, value: unknown): ResultDescriptor {
  const bytes = Buffer.byteLength(json, 'utf8');
  const count = Array.isArray(value) ? value.length : value !== null && typeof value === 'object' ? Object.keys(value).length : 1;
  const whole = bytes <= FULL_PREVIEW_BYTES;
  const full: ResultDescriptor = {
    id,
    bytes,
    count,
    shape: describeShape(value),
    preview: whole ? json : utf8Prefix(json, FULL_PREVIEW_BYTES),
    previewTruncated: !whole,
  };
  return fitDescriptor(full, MAX_DESCRIPTOR_BYTES);
}

/** Shrinks shape and preview so the descriptor's JSON takes at most `maxBytes`. */
export function fitDescriptor(descriptor: ResultDescriptor, maxBytes: number): ResultDescriptor {
  if (jsonBytes(descriptor) <= maxBytes) return descriptor;
  // Measured with `false`, the longer of the two booleans, so either outcome fits.
  const room = maxBytes - jsonBytes({ ...descriptor, shape: '', preview: '', previewTruncated: false });
  if (room < 0) throw new StoreArgumentError('id', 'leaves no room for a descriptor');
  const previewNeed = escapedBytes(descriptor.preview);
  const shapeBudget = Math.min(escapedBytes(descriptor.shape), Math.max(Math.floor(room / 3), room - previewNeed));
  const shape = fitEscaped(descriptor.shape, shapeBudget, '…');
  const preview = fitEscaped(descriptor.preview, room - escapedBytes(shape.text));
  return {
    ...descriptor,
    shape: shape.text,
    preview: preview.text,
    previewTruncated: descriptor.previewTruncated || preview.cut,
  };
}
