/**
 * A one-line structural sketch of a saved value, for the model to decide what to load: the kind
 * first (`array`, `object`, `string`, `number`, `boolean`, `null`), then for containers their
 * fields and their largest nested arrays with sampled item shapes. Traversal is bounded, so a
 * huge value costs no more than a small one; the sketch says when it was limited.
 */

const MAX_VISITS = 128;
const MAX_DEPTH = 4;
const MAX_KEYS_VISITED = 16;
const MAX_FIELDS_SHOWN = 6;
const MAX_ARRAYS_SHOWN = 3;
const MAX_KEY_CHARS = 40;
const MAX_PATH_CHARS = 96;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

function isObject(value: unknown): value is Record<string, Json> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Indices looked at in an array: first, middle, last. */
function sampleIndices(length: number): number[] {
  return [...new Set([0, Math.floor(length / 2), length - 1])].filter((i) => i >= 0 && i < length);
}

function shortKey(key: string): string {
  return JSON.stringify(key.length > MAX_KEY_CHARS ? `${key.slice(0, MAX_KEY_CHARS)}…` : key);
}

/** `{"id":number,"tags":array,…}`: the first few fields and their kinds. */
function fieldSketch(value: Record<string, Json>): string {
  const keys = Object.keys(value);
  const fields = keys.slice(0, MAX_FIELDS_SHOWN).map((key) => `${shortKey(key)}:${kindOf(value[key])}`);
  return `{${fields.join(',')}${keys.length > MAX_FIELDS_SHOWN ? ',…' : ''}}`;
}

function itemSketch(value: unknown): string {
  return isObject(value) ? fieldSketch(value) : kindOf(value);
}

/** `array[120] of {"id":number}` (sampled first, middle and last item). */
function arraySketch(items: Json[]): string {
  if (items.length === 0) return 'array[0]';
  const shapes = [...new Set(sampleIndices(items.length).map((i) => itemSketch(items[i])))];
  return `array[${items.length}] of ${shapes.join(' | ')}`;
}

function childPath(path: string, key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Breadth-first walk that finds nested arrays, largest first. */
function nestedArrays(root: Json): { arrays: { path: string; items: Json[] }[]; limited: boolean } {
  const queue: { value: Json; path: string; depth: number }[] = [{ value: root, path: '$', depth: 0 }];
  // Array items share the path `[*]`, so the same nested array in many rows is shown once (the longest).
  const arrays = new Map<string, Json[]>();
  let limited = false;
  for (let i = 0; i < queue.length; i++) {
    const { value, path, depth } = queue[i];
    if (Array.isArray(value) && depth > 0 && value.length >= (arrays.get(path)?.length ?? 0)) arrays.set(path, value);
    if (value === null || typeof value !== 'object') continue;
    if (depth === MAX_DEPTH) {
      limited = true;
      continue;
    }
    const children: [string, Json][] = Array.isArray(value)
      ? sampleIndices(value.length).map((index) => [`${path}[*]`, value[index]])
      : Object.keys(value)
          .slice(0, MAX_KEYS_VISITED)
          .map((key) => [childPath(path, key), value[key]]);
    if (!Array.isArray(value) && Object.keys(value).length > MAX_KEYS_VISITED) limited = true;
    for (const [childPathText, child] of children) {
      if (queue.length >= MAX_VISITS || childPathText.length > MAX_PATH_CHARS) {
        limited = true;
        continue;
      }
      queue.push({ value: child, path: childPathText, depth: depth + 1 });
    }
  }
  const found = [...arrays].map(([path, items]) => ({ path, items }));
  found.sort((a, b) => b.items.length - a.items.length || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { arrays: found.slice(0, MAX_ARRAYS_SHOWN), limited: limited || found.length > MAX_ARRAYS_SHOWN };
}

/** The sketch of a parsed JSON value (see the module comment). */
export function describeShape(value: unknown): string {
  const json = value as Json;
  if (json === null || typeof json !== 'object') return kindOf(json);
  const head = Array.isArray(json) ? arraySketch(json) : `object ${fieldSketch(json)}`;
  const { arrays, limited } = nestedArrays(json);
  const parts = [head, ...arrays.map(({ path, items }) => `${path}: ${arraySketch(items)}`)];
  return parts.join('; ') + (limited ? '; traversal limited' : '');
}
