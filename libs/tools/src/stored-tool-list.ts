import type { RegisteredClientTool } from '@codemode/contracts';
import type { EventLoopSlices } from './core/event-loop-slices';

/** Lists up to this size are parsed in one go (well under a slice). */
const WHOLE_PARSE_BYTES = 64 * 1024;
/** Bytes scanned between two checks of the slice. */
const SCAN_STEP = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/**
 * A session's client tool list as `ClientToolsLedger` stores it (a JSON array of objects, up to
 * 16 MiB), read on the worker's event loop in slices (SPEC §10 "Event loops"): one JSON.parse of
 * 11 MB of schemas with many properties held the loop ~240 ms. The bytes are scanned for the
 * array's elements (strings and their escapes skipped), and each tool (at most ~136 KB by the
 * schema and description caps) is parsed alone, yielding between.
 */
export async function readStoredToolList(bytes: Buffer, slices: EventLoopSlices): Promise<RegisteredClientTool[]> {
  if (bytes.length <= WHOLE_PARSE_BYTES) return JSON.parse(bytes.toString('utf8')) as RegisteredClientTool[];
  const tools: RegisteredClientTool[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let start = -1;
  for (let i = 0; i < bytes.length; i += 1) {
    if (i % SCAN_STEP === 0) await slices.pause();
    const byte = bytes[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (byte === BACKSLASH) escaped = true;
      else if (byte === QUOTE) inString = false;
      continue;
    }
    if (byte === QUOTE) inString = true;
    else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth += 1;
      if (depth === 2) start = i;
      if (depth === 1 && byte !== OPEN_ARRAY) throw new StoredToolListError();
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth -= 1;
      if (depth === 1) {
        tools.push(JSON.parse(bytes.toString('utf8', start, i + 1)) as RegisteredClientTool);
        await slices.pause();
      }
    }
  }
  if (depth !== 0) throw new StoredToolListError();
  return tools;
}

/** The stored bytes are not a JSON array of tools (they were written by something else). */
export class StoredToolListError extends Error {
  constructor() {
    super('the stored client tool list is not a JSON array; register the tools again');
    this.name = 'StoredToolListError';
  }
}
