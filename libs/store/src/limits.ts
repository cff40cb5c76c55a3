/** SPEC §4 limits of the session store and the results store, defined once. */

/** Longest store key, in UTF-16 code units (JavaScript string length). */
export const MAX_STORE_KEY_CHARS = 256;
/** Largest single store value: bytes of its UTF-8 JSON text. */
export const MAX_STORE_VALUE_BYTES = 256 * 1024;
/**
 * Largest whole store: the sum of its values' UTF-8 JSON bytes. Keys are not counted, as in
 * OpenClaw, so four values of exactly 256 KiB fill it exactly.
 */
export const MAX_STORE_BYTES = 1024 * 1024;

/** Most live results references per session. */
export const MAX_RESULTS = 64;
/** Largest `results.save` descriptor: bytes of its UTF-8 JSON. */
export const MAX_DESCRIPTOR_BYTES = 768;
/** A saved value up to this many bytes of JSON is previewed whole; a larger one by a prefix. */
export const FULL_PREVIEW_BYTES = 256;
