import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isWriteRefused, primaries, toStoreError, type RedisClient } from './redis';
import { LIMIT_RULES, SPEC_DEFAULT_HISTORY, type HistorySettings } from '@codemode/config';
import { InvalidArgumentError, StoreCommandError } from './errors';
import { raisedScriptError } from './lua-errors';
import { scriptLibrary, type ScriptLibrary } from './script-library';

/** Every script of this library; the file is `lua/<name>.lua`. */
export const SCRIPT_NAMES = [
  'append-event',
  'append-events',
  'request-run',
  'start-run',
  'finish-run',
  'abandon-run',
  'reject-exec',
  'configure-session',
  'park-run',
  'reserve-resume',
  'answer-idle-wait',
  'give-back-resume',
  'owe-answer',
  'resume-run',
  'take-over-run',
  'release-run',
  'commit-store',
  'register-tools',
  'register-skills',
  'put-tenant-skill',
  'tenant-tool',
  'request-approval',
  'decide-approval',
  'touch-session-index',
  'measure-session',
  'tenant-stored-bytes',
  'delete-session',
  'read-events-page',
  'read-log-events',
  'read-run',
  'create-mcp-task',
] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

interface LoadedScript {
  readonly lua: string;
  readonly sha: string;
  /** A script with includes also runs as a function of its own library (script-library.ts). */
  readonly library: ScriptLibrary | undefined;
}

const INCLUDE = /^--- @include "([^"]+)"\s*$/gm;
const FUNCTION_NOT_FOUND = /^ERR Function not found/;
const LIBRARY_EXISTS = /^ERR Library '[^']+' already exists/;
const FUNCTIONS_REFUSED = /^(NOPERM|ERR unknown command)/;
const DEFINE = /^--- @define ([A-Z][A-Z0-9_]*)\s*$/gm;
/** A script that only reads: its library's function is registered with Redis's `no-writes` flag. */
const NO_WRITES = /^--- @no-writes\s*$/m;

/** What the append path (lua/includes/settings.lua) is built with: retention, the run history cap, session expiry. */
export interface EventsScriptSettings extends HistorySettings {
  /**
   * A run that wrote no event for this long no longer holds back trimming of the log (a run whose
   * worker died and that nobody ended). Longer than a parked run can live plus an hour.
   * @default the largest snapshotTtlSeconds (SPEC §8) + 3600
   */
  readonly liveRunMaxIdleSeconds: number;
  /**
   * A session's long-lived keys (log, projections, store, tools, idempotency keys) expire this long
   * after its last write (SPEC §10); a write of a live run keeps them at least liveRunMaxIdleSeconds.
   * @default 2592000 (CODEMODE_SESSION_TTL_SECONDS)
   */
  readonly sessionTtlSeconds: number;
  /**
   * Runs are kept compact (SPEC §13): a run's request and result data packed
   * (log/event-packing.ts); its hash, from the request on, with `createdAt`, `startedAt` and
   * `endedAt` in milliseconds and no `restartSafe` when false, and once finished without what a
   * view derives (its id, `updatedAt`) and with what only a view reads packed into one field,
   * `ended` (lua/includes/ended-run.lua); the log's entries without the `at` their ids carry, with
   * their type as a code and the data every run repeats as its variable parts (log/entry-codes.ts).
   * Off while processes of a release that cannot read them still run (a rolling upgrade).
   * @default true (CODEMODE_COMPACT_RUNS)
   */
  readonly compactRuns: boolean;
}

/** Defaults of the settings: SPEC §6 and §8. */
export const DEFAULT_EVENTS_SCRIPT_SETTINGS: Readonly<EventsScriptSettings> = Object.freeze({
  ...SPEC_DEFAULT_HISTORY,
  liveRunMaxIdleSeconds: LIMIT_RULES.snapshotTtlSeconds.max + 3600,
  sessionTtlSeconds: 2_592_000,
  compactRuns: true,
});

/** The `--- @define` values of lua/includes/settings.lua; every number a positive safe integer, a switch 1 or 0. */
function eventsDefines(settings: Partial<EventsScriptSettings>): Record<string, number> {
  const s = { ...DEFAULT_EVENTS_SCRIPT_SETTINGS, ...settings };
  for (const [name, value] of Object.entries(s)) {
    if (typeof value === 'boolean') continue;
    if (!Number.isSafeInteger(value) || value < 1) throw new InvalidArgumentError(name, 'must be a positive integer');
  }
  return {
    COMPACT_RUNS: s.compactRuns ? 1 : 0,
    RETENTION_MS: s.retentionSeconds * 1000,
    RUN_HISTORY_MAX_EVENTS: s.runHistoryMaxEvents,
    RUN_HISTORY_MAX_BYTES: s.runHistoryMaxBytes,
    LIVE_RUN_MAX_IDLE_MS: s.liveRunMaxIdleSeconds * 1000,
    SESSION_TTL_MS: s.sessionTtlSeconds * 1000,
  };
}

/**
 * Reads the Lua scripts from disk (next to this module: `src/lua` under ts-jest, `dist/.../lua`
 * after the build copies them), inlines `--- @include "path"` lines once each, and runs them with
 * EVALSHA, falling back to EVAL when the server does not know the script yet (restart, failover,
 * SCRIPT FLUSH). The SHA is of the expanded text, so a changed script is a new script.
 * A script with includes runs as a Redis Function instead (FCALL; script-library.ts), its library
 * loaded on every primary when a call finds it missing (first use, restart, failover, FUNCTION
 * FLUSH); where the server refuses FUNCTION or FCALL (an ACL without them) the client stays on
 * EVALSHA, and a call refused for memory or while Redis refuses writes is EVAL'd (see `call`).
 * `--- @no-writes` marks a script that only reads: its function is registered as such, so Redis
 * runs it where it refuses writes (at `maxmemory`, `min-replicas-to-write` unmet), as it runs an
 * EVAL'd script that only reads.
 * `--- @define NAME` lines become `local NAME = <value>` from the loader's defines: this is how
 * deployment settings (retention, the run history cap, session expiry) reach the append path without an ARGV slot
 * in every script; a script built with other settings is another script (another SHA).
 * A script raising a known error reply (see `raisedScriptError`) rejects with its typed error.
 *
 * Another library with its own `lua/` directory makes its own instance with its directory and
 * script names (`new ScriptLoader(dir, NAMES)`); the default instance serves this library.
 */
export class ScriptLoader<N extends string = ScriptName> {
  private static shared?: ScriptLoader;
  private readonly scripts = new Map<N, LoadedScript>();
  private readonly names: readonly string[];
  /** Clients whose server refused FUNCTION or FCALL: their scripts run with EVALSHA. */
  private readonly withoutFunctions = new WeakSet<RedisClient>();
  /** Library loads in flight, by client and library name (loadOnce). */
  private readonly loading = new WeakMap<RedisClient, Map<string, Promise<boolean>>>();
  /**
   * Libraries a client's server would not load for a reason of their own (a compile error, a
   * server's partial FUNCTION support), by client: their scripts run with EVALSHA there, where
   * each call would otherwise pay a failed FCALL and load before its EVALSHA.
   */
  private readonly refused = new WeakMap<RedisClient, Set<string>>();
  private reportRefusal: ((library: string, reason: string) => void) | undefined;

  /**
   * @param dir where `<name>.lua` files live. @default this library's `lua/`
   * @param names the scripts this loader may run. @default SCRIPT_NAMES
   * @param defines values of the `--- @define` lines. @default the events settings' defaults
   */
  constructor(
    private readonly dir = join(__dirname, '..', 'lua'),
    names: readonly N[] = SCRIPT_NAMES as readonly string[] as readonly N[],
    private readonly defines: Readonly<Record<string, number>> = eventsDefines({}),
  ) {
    this.names = names;
  }

  /**
   * One loader per process with the default settings, never reconfigured: a ledger built without
   * a loader uses it (tests). A process built with its deployment's settings passes its own
   * (`createEventStores`).
   */
  static default(): ScriptLoader {
    return (ScriptLoader.shared ??= new ScriptLoader());
  }

  /** A loader of this library's scripts built with `settings` (the rest default): `createEventStores`, and tests. */
  static withSettings(settings: Partial<EventsScriptSettings>): ScriptLoader {
    return new ScriptLoader(undefined, undefined, eventsDefines(settings));
  }

  /** The value of a `--- @define NAME` line (e.g. SESSION_TTL_MS), for code that must agree with the scripts. */
  defined(name: string): number | undefined {
    return this.defines[name];
  }

  /** The expanded source of a script (tests and tooling). */
  source(name: N): string {
    return this.load(name).lua;
  }

  /** The library a script runs as, when it has includes (tests and tooling: the bench names FCALLs by it). */
  library(name: N): ScriptLibrary | undefined {
    return this.load(name).library;
  }

  /** The libraries of every script of this loader (pruneScriptLibraries keeps them). */
  libraries(): ScriptLibrary[] {
    return (this.names as readonly N[]).flatMap((name) => this.library(name) ?? []);
  }

  /** Where a library a server would not load is told, once per client and library (a process's log). */
  onLibraryRefused(report: (library: string, reason: string) => void): void {
    this.reportRefusal = report;
  }

  async run(redis: RedisClient, name: N, keys: readonly string[], args: readonly (string | number | Buffer)[]): Promise<unknown> {
    const script = this.load(name);
    try {
      return await this.call(redis, script, keys, args);
    } catch (err) {
      throw raisedScriptError(err) ?? err;
    }
  }

  private async call(
    redis: RedisClient,
    script: LoadedScript,
    keys: readonly string[],
    args: readonly (string | number | Buffer)[],
  ): Promise<unknown> {
    const { library } = script;
    if (library && !this.withoutFunctions.has(redis) && !this.refused.get(redis)?.has(library.name)) {
      for (let loaded = false; ; loaded = true) {
        try {
          return await redis.fcall(library.name, keys.length, ...keys, ...args);
        } catch (err) {
          if (!(err instanceof Error)) throw err;
          if (FUNCTIONS_REFUSED.test(err.message)) {
            this.withoutFunctions.add(redis);
            break;
          }
          // At maxmemory, or while it refuses writes (too few replicas, a failed save), Redis
          // refuses a function that may write before it runs, where an EVAL'd script runs until
          // its first write: EVAL'd, an answer that writes nothing (an idempotent answer, a
          // claim's retry, a wait on an ended run) or a delete still goes through, as before.
          if (isWriteRefused(err)) break;
          if (!FUNCTION_NOT_FOUND.test(err.message)) throw err;
          // Loaded once and still not found (a primary the client did not list yet): EVAL this call.
          if (loaded || !(await this.loadOnce(redis, library))) break;
        }
      }
    }
    try {
      return await redis.evalsha(script.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      // EVAL also caches the script server-side, so the next EVALSHA hits.
      return redis.eval(script.lua, keys.length, ...keys, ...args);
    }
  }

  /** `loadLibrary`, one at a time per client and library: the calls that missed it meanwhile wait for that load. */
  private loadOnce(redis: RedisClient, library: ScriptLibrary): Promise<boolean> {
    let loads = this.loading.get(redis);
    if (!loads) this.loading.set(redis, (loads = new Map<string, Promise<boolean>>()));
    let load = loads.get(library.name);
    if (!load) {
      load = this.loadLibrary(redis, library).finally(() => loads.delete(library.name));
      loads.set(library.name, load);
    }
    return load;
  }

  /**
   * Loads `library` on the server (every primary of a cluster); false when it could not be, and
   * the call should be EVAL'd: a server that refuses FUNCTION (no permission, unknown command)
   * is remembered, and so is one that will not take this library (refuse); a full or unreachable
   * Redis is this call's alone.
   */
  private async loadLibrary(redis: RedisClient, library: ScriptLibrary): Promise<boolean> {
    try {
      await Promise.all(
        primaries(redis).map((server) =>
          server.call('FUNCTION', 'LOAD', library.code).catch((err: unknown) => {
            // Another process loaded it meanwhile.
            if (!(err instanceof Error) || !LIBRARY_EXISTS.test(err.message)) throw err;
          }),
        ),
      );
      return true;
    } catch (err) {
      if (err instanceof Error && FUNCTIONS_REFUSED.test(err.message)) this.withoutFunctions.add(redis);
      // Neither full nor unreachable (toStoreError, the one reading of a Redis failure): this library's own refusal.
      else if (toStoreError(err) instanceof StoreCommandError) this.refuse(redis, library, err);
      return false;
    }
  }

  private refuse(redis: RedisClient, library: ScriptLibrary, err: unknown): void {
    let refused = this.refused.get(redis);
    if (!refused) this.refused.set(redis, (refused = new Set<string>()));
    refused.add(library.name);
    this.reportRefusal?.(library.name, err instanceof Error ? err.message : String(err));
  }

  private load(name: N): LoadedScript {
    let script = this.scripts.get(name);
    if (!script) {
      if (!this.names.includes(name)) throw new InvalidArgumentError('script', `${name} is unknown`);
      const file = join(this.dir, `${name}.lua`);
      const text = readFileSync(file, 'utf8');
      // The includes first (each once), then the script's own text: what EVAL runs, and the two
      // parts of its library (script-library.ts).
      const included = new Set<string>();
      const prologue = [...text.matchAll(INCLUDE)].map(([, ref]) => this.inline(join(dirname(file), `${ref}.lua`), included)).join('\n');
      const main = text.replace(INCLUDE, '');
      const lua = this.define(prologue === '' ? main : `${prologue}\n${main}`);
      const library = prologue === '' ? undefined : scriptLibrary(this.define(prologue), this.define(main), NO_WRITES.test(text));
      script = { lua, sha: createHash('sha1').update(lua).digest('hex'), library };
      this.scripts.set(name, script);
    }
    return script;
  }

  private define(lua: string): string {
    return lua.replace(DEFINE, (_line, name: string) => {
      const value = this.defines[name];
      if (value === undefined) throw new InvalidArgumentError('define', `${name} has no value`);
      return `local ${name} = ${value}`;
    });
  }

  /** An include's text with its own includes inlined, each once in a script ('' when it already is). */
  private inline(file: string, included: Set<string>): string {
    if (included.has(file)) return '';
    included.add(file);
    return readFileSync(file, 'utf8').replace(INCLUDE, (_line, ref: string) => this.inline(join(dirname(file), `${ref}.lua`), included));
  }
}
