import { createHash } from 'node:crypto';
import { primaries, type RedisClient } from './redis';

/**
 * A script whose includes are loaded once as a Redis Function library (FUNCTION LOAD), so that a
 * call runs only the script's own text. Redis runs an EVALSHA'd script's whole chunk at every
 * call: the append path's ~70 local functions and tables were made again each time, ~11 µs of
 * Redis before the script did anything (docs/benchmarks.md, "what a script costs Redis").
 */
export interface ScriptLibrary {
  /** The library's and its one function's name: `codemode_<sha1 of the code>`, so a changed script is a new library. */
  readonly name: string;
  /** FUNCTION LOAD's argument. */
  readonly code: string;
}

/**
 * A top-level `local` of lower-case names in the includes: state of one call (a clock read, the
 * run hash as read, what the appends changed), which a library keeps between calls. Each is given
 * its initial value again at the start of every call (nil when it has none), so a call sees what
 * an EVAL would. Names in capitals are constants, set once and never written (script-library.spec
 * checks the includes); functions are made once.
 */
const PER_CALL_STATE = /^local ([a-z_][A-Za-z0-9_]*(?:\s*,\s*[a-z_][A-Za-z0-9_]*)*)\s*(?:=\s*(.+))?$/gm;

/**
 * The library of one script (`noWrites`: the script only reads, `--- @no-writes` in its text): `prologue` (its includes, expanded, and the defines) made once, at
 * the first call (a library's top level runs where no global but `redis` exists, and the includes
 * use `math`, `string`, `cjson`); `main` (the script's own text, which reads KEYS and ARGV and
 * returns) at every call. KEYS and ARGV are locals of the library that each call sets, since the
 * includes read them as the script's globals (a function has no such globals).
 */
export function scriptLibrary(prologue: string, main: string, noWrites = false): ScriptLibrary {
  const resets = [...prologue.matchAll(PER_CALL_STATE)].map(([, names, value]) => `    ${names} = ${value ?? 'nil'}`);
  const body = [
    'local KEYS, ARGV',
    'local main, reset',
    'local function setup()',
    prologue,
    '  reset = function()',
    ...resets,
    '  end',
    '  main = function()',
    main,
    '  end',
    'end',
    'local function call(keys, args)',
    '  KEYS, ARGV = keys, args',
    '  if not main then setup() end',
    '  reset()',
    '  return main()',
    'end',
  ].join('\n');
  // The flag is part of what is hashed: a server holding the library without it is not taken as holding this one.
  const name = `codemode_${createHash('sha1')
    .update(noWrites ? `${body}\nno-writes` : body)
    .digest('hex')}`;
  // A function Redis is not told writes nothing is refused up front as a write (under
  // `maxmemory`, or `min-replicas-to-write` unmet), where an EVAL'd script that only reads runs.
  const register = noWrites
    ? `redis.register_function{function_name='${name}', callback=call, flags={'no-writes'}}`
    : `redis.register_function('${name}', call)`;
  return { name, code: `#!lua name=${name}\n${body}\n${register}\n` };
}

/** What every library of this service is named (scriptLibrary): the pattern FUNCTION LIST looks for. */
const LIBRARY_PATTERN = 'codemode_*';

/**
 * Deletes from the server (every primary of a cluster) the libraries of this service that none
 * of `keep` runs: those of earlier releases, whose scripts had other code. A server keeps every
 * library it was given, persisted and replicated (~160 KB each, ~20 per release), so without this
 * each deploy would leave its libraries behind. Deleting one another process still calls costs
 * that process one load at its next call (ScriptLoader loads a library it finds missing), so a
 * process of another release or other settings is never broken by it. Returns how many it deleted.
 */
export async function pruneScriptLibraries(redis: RedisClient, keep: Iterable<{ libraries(): ScriptLibrary[] }>): Promise<number> {
  const kept = new Set([...keep].flatMap((loader) => loader.libraries().map((library) => library.name)));
  const deleted = await Promise.all(
    primaries(redis).map(async (server) => {
      const listed = (await server.call('FUNCTION', 'LIST', 'LIBRARYNAME', LIBRARY_PATTERN)) as unknown[][];
      const stale = listed.map((library) => String(library[1])).filter((name) => !kept.has(name));
      let deleted = 0;
      for (const name of stale) {
        // Gone meanwhile (another process pruned it), or the node stepped down: nothing to do.
        const gone = await server.call('FUNCTION', 'DELETE', name).then(
          () => true,
          () => false,
        );
        if (gone) deleted += 1;
      }
      return deleted;
    }),
  );
  return deleted.reduce((sum, n) => sum + n, 0);
}

/** The log lines `startScriptLibraries` writes (a process's logger fits). */
export interface ScriptLibrariesLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** What a process runs scripts with (a ScriptLoader): its libraries, and where one a server would not load is told. */
export interface ScriptLibraries {
  libraries(): ScriptLibrary[];
  onLibraryRefused(report: (library: string, reason: string) => void): void;
}

/**
 * A process's start: deletes earlier releases' libraries (pruneScriptLibraries) in the
 * background, and logs what it did; a failure is logged, never thrown (the next start tries again).
 * A library a server would not load (its scripts then run with EVALSHA) is logged when met.
 */
export function startScriptLibraries(redis: RedisClient, loaders: Iterable<ScriptLibraries>, log: ScriptLibrariesLog): void {
  const all = [...loaders];
  for (const loader of all) {
    loader.onLibraryRefused((library, reason) =>
      log.warn(
        { library, reason },
        'Redis would not load a script library; its script runs with EVALSHA instead, at ~15-20 % more Redis CPU',
      ),
    );
  }
  pruneScriptLibraries(redis, all).then(
    (deleted) => {
      if (deleted > 0) log.info({ deleted }, "deleted earlier releases' script libraries from Redis");
    },
    (err: unknown) =>
      log.warn({ err: String(err) }, "could not delete earlier releases' script libraries from Redis; the next start tries again"),
  );
}
