/**
 * SPEC §10 "Depth": deepest nesting of arrays and objects accepted in a request body and in a value
 * a cell returns or passes to a tool. A top-level `{}` or `[]` is one level.
 */
export const MAX_JSON_DEPTH = 128;
export const BODY_TOO_DEEP_ERROR = `request body nests deeper than ${MAX_JSON_DEPTH} levels.`;
export const VALUE_TOO_DEEP_ERROR = `value nests deeper than ${MAX_JSON_DEPTH} levels.`;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * True when JSON text (UTF-8 bytes, or a string) opens more than `maxDepth` arrays or objects
 * inside one another, counting only brackets outside strings. One pass, no recursion and no
 * allocation, so it runs before any parser or schema that could recurse. It does not validate:
 * text that is not JSON is left to the parser (every byte of a multi-byte UTF-8 sequence is
 * >= 0x80, and every UTF-16 surrogate is too, so none is read as a quote, backslash or bracket).
 */
export function jsonNestsDeeperThan(json: Uint8Array | string, maxDepth: number = MAX_JSON_DEPTH): boolean {
  return typeof json === 'string' ? stringNestsDeeper(json, maxDepth) : bytesNestDeeper(json, maxDepth);
}

// Two copies of one loop, each reading one kind of input (a shared loop with an accessor runs
// several times slower, and this one scans megabytes). A string's end is found with the native
// `indexOf`: a quote ends it unless an odd run of backslashes precedes it.
function bytesNestDeeper(json: Uint8Array, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < json.length; i += 1) {
    const code = json[i];
    if (code === QUOTE) {
      i = json.indexOf(QUOTE, i + 1);
      while (i > 0 && json[i - 1] === BACKSLASH && escaped(json, i)) i = json.indexOf(QUOTE, i + 1);
      if (i < 0) return false;
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      depth -= 1;
    }
  }
  return false;
}

function stringNestsDeeper(json: string, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < json.length; i += 1) {
    const code = json.charCodeAt(i);
    if (code === QUOTE) {
      i = json.indexOf('"', i + 1);
      while (i > 0 && json.charCodeAt(i - 1) === BACKSLASH && escaped(json, i)) i = json.indexOf('"', i + 1);
      if (i < 0) return false;
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      depth -= 1;
    }
  }
  return false;
}

/** Whether the quote at `quote` is escaped: an odd number of backslashes right before it. */
function escaped(json: Uint8Array | string, quote: number): boolean {
  let backslashes = 0;
  for (let i = quote - 1; i >= 0 && (typeof json === 'string' ? json.charCodeAt(i) : json[i]) === BACKSLASH; i -= 1) backslashes += 1;
  return backslashes % 2 === 1;
}
