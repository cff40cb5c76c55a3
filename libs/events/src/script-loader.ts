import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Redis } from 'ioredis';
import { InvalidArgumentError } from './errors';

/** Every script of this library; the file is `lua/<name>.lua`. */
export const SCRIPT_NAMES = [
  'append-event',
  'request-run',
  'start-run',
  'finish-run',
  'abandon-run',
  'configure-session',
  'claim-resume',
  'release-resume',
  'resume-run',
  'commit-store',
  'register-tools',
] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

interface LoadedScript {
  readonly lua: string;
  readonly sha: string;
}

const INCLUDE = /^--- @include "([^"]+)"\s*$/gm;

/**
 * Reads the Lua scripts from disk (next to this module: `src/lua` under ts-jest, `dist/.../lua`
 * after the build copies them), inlines `--- @include "path"` lines once each, and runs them with
 * EVALSHA, falling back to EVAL when the server does not know the script yet (restart, failover,
 * SCRIPT FLUSH). The SHA is of the expanded text, so a changed script is a new script.
 *
 * Another library with its own `lua/` directory makes its own instance with its directory and
 * script names (`new ScriptLoader(dir, NAMES)`); the default instance serves this library.
 */
export class ScriptLoader<N extends string = ScriptName> {
  private static shared?: ScriptLoader;
  private readonly scripts = new Map<N, LoadedScript>();
  private readonly names: readonly string[];

  /**
   * @param dir where `<name>.lua` files live. @default this library's `lua/`
   * @param names the scripts this loader may run. @default SCRIPT_NAMES
   */
  constructor(
    private readonly dir = join(__dirname, 'lua'),
    names: readonly N[] = SCRIPT_NAMES as readonly string[] as readonly N[],
  ) {
    this.names = names;
  }

  /** One loader per process: scripts are read from disk once. */
  static default(): ScriptLoader {
    return (ScriptLoader.shared ??= new ScriptLoader());
  }

  /** The expanded source of a script (tests and tooling). */
  source(name: N): string {
    return this.load(name).lua;
  }

  async run(redis: Redis, name: N, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    const script = this.load(name);
    try {
      return await redis.evalsha(script.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      // EVAL also caches the script server-side, so the next EVALSHA hits.
      return redis.eval(script.lua, keys.length, ...keys, ...args);
    }
  }

  private load(name: N): LoadedScript {
    let script = this.scripts.get(name);
    if (!script) {
      if (!this.names.includes(name)) throw new InvalidArgumentError('script', `${name} is unknown`);
      const lua = this.expand(join(this.dir, `${name}.lua`), new Set());
      script = { lua, sha: createHash('sha1').update(lua).digest('hex') };
      this.scripts.set(name, script);
    }
    return script;
  }

  private expand(file: string, included: Set<string>): string {
    const text = readFileSync(file, 'utf8');
    return text.replace(INCLUDE, (_line, ref: string) => {
      const target = join(dirname(file), `${ref}.lua`);
      if (included.has(target)) return '';
      included.add(target);
      return this.expand(target, included);
    });
  }
}
