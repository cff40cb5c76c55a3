import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { StoreCommandError } from '../platform/errors';

/**
 * Event data kept compressed in the log where it pays (SPEC §13 "compressed where it pays"): the
 * text a reader decodes is exactly the JSON the append scripts would have stored, deflated against
 * a fixed dictionary of what run requests and results repeat (their keys and the default limits),
 * base64 so ioredis's string replies carry it intact, behind a prefix no JSON text starts with.
 *
 * The dictionary belongs to the prefix: an entry written under `~1` is inflated with this
 * dictionary for as long as such entries may be kept, so it never changes; another dictionary gets
 * another prefix. Only data of at most PACK_MAX_BYTES is packed, so unpacking one entry yields at
 * most that much whatever the tenant wrote (a page of the feed is bounded by its stored bytes and
 * count: highly compressible data must not turn it into an unbounded one on the API).
 */
export const PACKED_PREFIX = '~1';

/** The largest data text packed; larger data is kept as it is. */
export const PACK_MAX_BYTES = 4096;

// Frequent strings last: deflate codes a nearer match with fewer bits.
const DICTIONARY_V1 = Buffer.from(
  [
    '"pendingToolCalls":[{"id":"bridge:callValue:1","method":"callValue","tool":"","input":',
    '"output":[{"type":"text","text":"',
    '"warnings":[',
    '"agents":true,"idempotencyKey":"',
    '{"status":"failed","error":"","code":"timeout","failurePhase":"guest","bridgeDispatchStarted":false,',
    '"code":"invalid_input","failurePhase":"input","bridgeDispatchStarted":true,',
    '"repair":{"allowed":true,"remainingAttempts":1,"reason":"no tool call was dispatched; correct the cell and run it again."}',
    '{"status":"waiting","runId":"cm_","reason":"pending_tools",',
    '{"restartSafe":false,"awaitResults":false,"limits":{"timeoutMs":10000,"memoryLimitBytes":67108864,',
    '"maxOutputBytes":65536,"maxSnapshotBytes":10485760,"maxPendingToolCalls":16,"snapshotTtlSeconds":900,',
    '"searchDefaultLimit":8,"maxSearchLimit":50,"resultsTtlSeconds":3600},"title":"","code":"return ',
    '","shell":{"backgroundMs":10000,"timeoutSeconds":1800,"cleanupMs":1800000,"maxOutputChars":200000,',
    '"pendingMaxOutputChars":30000,"inputWaitIdleMs":15000,"notifyOnExit":true,"notifyOnExitEmptySuccess":false},',
    '"agentId":null,"requestId":"',
    '{"result":{"status":"completed","value":',
    ',"replaySafe":false,"telemetry":{"catalogSize":6,"sources":{"openclaw":6,"mcp":0,"client":0},',
    '"searchCount":0,"describeCount":0,"callCount":0,"counterScope":"run","visibleTools":["exec","wait"]}}}',
  ].join(''),
);

/**
 * A 4 KiB window holds the dictionary and most of the data it is matched against; with a small
 * hash table the deflate state is ~24 KiB instead of zlib's default ~256 KiB, allocated per call.
 * (Inflating needs no option: a window of zlib's default size reads any smaller one.)
 */
const DEFLATE_OPTIONS = { dictionary: DICTIONARY_V1, windowBits: 12, memLevel: 4 };

/**
 * The data text the append scripts store for `head` with `raws` spliced in (append.lua
 * `splice_data`): the same bytes, so a packed entry unpacks to what an unpacked one holds.
 */
export function splicedEventData(head: string, raws: readonly (readonly [name: string, json: string])[]): string {
  if (raws.length === 0) return head;
  const parts = raws.map(([name, json]) => `${JSON.stringify(name)}:${json}`).join(',');
  return `${head.slice(0, -1)}${head === '{}' ? '' : ','}${parts}}`;
}

/** The packed form of `data`, or undefined where packing does not pay (or the data is too large). */
export function packEventData(data: string): string | undefined {
  const bytes = Buffer.byteLength(data);
  if (bytes > PACK_MAX_BYTES) return undefined;
  const packed = PACKED_PREFIX + deflateRawSync(data, DEFLATE_OPTIONS).toString('base64');
  return packed.length < bytes ? packed : undefined;
}

/** The data text of a stored entry: as it is, or unpacked. */
export function unpackEventData(stored: string): string {
  if (!stored.startsWith(PACKED_PREFIX)) return stored;
  try {
    const packed = Buffer.from(stored.slice(PACKED_PREFIX.length), 'base64');
    return inflateRawSync(packed, { dictionary: DICTIONARY_V1, maxOutputLength: PACK_MAX_BYTES }).toString('utf8');
  } catch (err) {
    throw new StoreCommandError(err);
  }
}
