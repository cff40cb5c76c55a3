import type { Redis } from 'ioredis';

/**
 * Kinds of key, by the pattern of the key after the deployment prefix (`<p>:…`) or, for keys in a
 * queue shard's hash tag, after `{<p>:` . The first match names a key. `:past` and `:past-cut`
 * hold finished runs' records (libs/events/src/lua/includes/run-record.lua), the shard's
 * `:stream`/`:live` keys the stream dispatch of issue 40.
 */
const KEY_KINDS: [string, RegExp][] = [
  ['session event stream (`:events`)', /^\{[^}]+\}:events$/],
  ['run hashes (`:run:<id>`)', /^\{[^}]+\}:run:/],
  ['transcripts (`:transcript`)', /^\{[^}]+\}:transcript$/],
  ['runs index (`:runs`)', /^\{[^}]+\}:runs$/],
  ["finished runs' records (`:past`, `:past-cut`)", /^\{[^}]+\}:(past|past-cut)$/],
  ['session hashes and other session keys', /^\{[^}]+\}:/],
  ['run locations (`runloc:`)', /^runloc:/],
  ['live-run index (`live:{…}`)', /^live:\{/],
  ['cell shard streams (`{…cells-n}:stream`, `…:stream:rest`)', /^cells-\d+\}:stream(:rest)?$/],
  ['cell shard live index (`{…cells-n}:live`)', /^cells-\d+\}:live$/],
  ['BullMQ cell queues (`{…cells-n}:*`: jobs, events stream, markers)', /^cells-\d+\}:/],
];

/** What every kind of key holds together (of `retainedByKind`'s answer). */
export function allKeysBytes(kinds: readonly { bytes: number }[]): number {
  return kinds.reduce((sum, kind) => sum + kind.bytes, 0);
}

/**
 * What a deployment's keys hold, by kind of key, in bytes per `runs` (MEMORY USAGE of every key of
 * `prefix`, SAMPLES 0: whole values). Per finished run when `runs` is how many finished.
 */
export async function retainedByKind(redis: Redis, prefix: string, runs: number): Promise<{ kind: string; bytes: number }[]> {
  const bytes = new Map<string, number>();
  for (const head of [`${prefix}:`, `{${prefix}:`]) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${head}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const rest = key.slice(head.length);
        const kind = KEY_KINDS.find(([, pattern]) => pattern.test(rest))?.[0] ?? 'tenant and fleet keys';
        bytes.set(kind, (bytes.get(kind) ?? 0) + Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0));
      }
    } while (cursor !== '0');
  }
  return [...bytes].map(([kind, total]) => ({ kind, bytes: total / runs })).sort((a, b) => b.bytes - a.bytes);
}
