import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { ScriptLoader, SCRIPT_NAMES } from '@codemode/events';
import { FLEET_SCRIPT_NAMES, fleetScripts } from '@codemode/fleet';
import { REDIS_URL } from '../test/utils/test-stack';
import { RedisConnections, type NamedProcess } from './redis-connections';
import { fmt, measureThroughput } from './stats';

export interface RedisCostReport {
  execs: number;
  /** Execs kept running at once (1: one after another). */
  inFlight: number;
  /**
   * Top-level commands sent by the api and the worker per exec (a script counts once, its inner
   * commands not at all; commands pipelined in one socket write count one each). Not socket
   * round trips: those are `CounterCost.socketReads` (bench/redis-counters.ts).
   */
  commands: number;
  /** Microseconds Redis spent executing commands per exec, as its slow log times them. */
  redisUs: number;
  /** Per script, and per plain command by name, most Redis time first. */
  scripts: { name: string; calls: number; us: number }[];
  /** Per process (when `processes` were named), its top-level commands and their slow-log µs per exec. */
  byRole: { role: string; commands: number; us: number }[];
}

/**
 * Redis work per exec, by script: the slow log at threshold 0 times every command Redis runs,
 * the commands inside a script included, for `execs` execs, `inFlight` at once (one after another
 * by default). A script's own time includes its inner commands, so only top-level commands are
 * summed. Inner commands are told apart by their case: ioredis sends command names in lower case,
 * and the Lua of this service and of BullMQ calls them in upper case. With `processes`, only
 * commands from their connections count (found by the client address the slow log records), so
 * other clients of a shared Redis are left out and each command is put to the process that sent it.
 */
export async function measureRedisCost(
  execs: number,
  exec: () => Promise<unknown>,
  redisUrl = REDIS_URL,
  processes?: NamedProcess[],
  inFlight = 1,
): Promise<RedisCostReport> {
  const redis = new Redis(redisUrl);
  const names = scriptNames();
  const connections = processes ? new RedisConnections(Number(new URL(redisUrl).port || 6379), processes) : null;
  const [, threshold] = await redis.config('GET', 'slowlog-log-slower-than');
  const [, maxLen] = await redis.config('GET', 'slowlog-max-len');
  try {
    await redis.config('SET', 'slowlog-max-len', '1000000');
    await redis.config('SET', 'slowlog-log-slower-than', '0');
    await redis.slowlog('RESET');
    const ownersBefore = connections?.owners();
    await measureThroughput(execs, inFlight, exec);
    const entries = (await redis.slowlog('GET', '-1')) as [number, number, number, string[], string][];
    await redis.config('SET', 'slowlog-log-slower-than', threshold);
    // A connection closed during the execs is known from the first reading, one opened from the second.
    const owners = new Map([...(connections?.owners() ?? []), ...(ownersBefore ?? [])]);
    let commands = 0;
    let redisUs = 0;
    const scripts = new Map<string, { calls: number; us: number }>();
    const byRole = new Map<string, { commands: number; us: number }>();
    for (const [, , us, args, client] of entries) {
      const command = args[0] ?? '';
      if (command !== command.toLowerCase() || command.startsWith('slowlog') || command.startsWith('config')) continue;
      if (connections) {
        const role = owners.get(Number(client.slice(client.lastIndexOf(':') + 1))) ?? 'other';
        if (role === 'other') continue;
        const row = byRole.get(role) ?? { commands: 0, us: 0 };
        row.commands += 1;
        row.us += us;
        byRole.set(role, row);
      }
      commands += 1;
      redisUs += us;
      // A plain command is a row of its own (`zadd`, `hgetall`…); a script, by its name.
      const sha = command === 'eval' ? sha1(args[1] ?? '') : command === 'evalsha' || command === 'fcall' ? (args[1] ?? '') : '';
      const name = sha === '' ? `command ${command}` : (names.get(sha) ?? `script ${sha.slice(0, 8)}`);
      const row = scripts.get(name) ?? { calls: 0, us: 0 };
      row.calls += 1;
      row.us += us;
      scripts.set(name, row);
    }
    return {
      execs,
      inFlight,
      commands: commands / execs,
      redisUs: redisUs / execs,
      scripts: [...scripts].map(([name, row]) => ({ name, calls: row.calls / execs, us: row.us / execs })).sort((a, b) => b.us - a.us),
      byRole: [...byRole]
        .map(([role, row]) => ({ role, commands: row.commands / execs, us: row.us / execs }))
        .sort((a, b) => a.role.localeCompare(b.role)),
    };
  } finally {
    await redis.config('SET', 'slowlog-log-slower-than', threshold);
    await redis.config('SET', 'slowlog-max-len', maxLen);
    redis.disconnect();
  }
}

export function redisCostTable(report: RedisCostReport, what = ''): string {
  return [
    `| per exec \`return 1+1\` (${report.execs} ${report.inFlight > 1 ? `at ${report.inFlight} in flight` : 'sequential'}${what}) | calls | Redis µs |`,
    '|---|---|---|',
    ...report.scripts.map((s) => `| ${s.name} | ${fmt(s.calls)} | ${fmt(s.us, 0)} |`),
    ...report.byRole.map((r) => `| top-level commands from the ${r.role} | ${fmt(r.commands, 1)} | ${fmt(r.us, 0)} |`),
    `| **all top-level commands from api and worker** (a script once; not socket round trips) | ${fmt(report.commands, 1)} | ${fmt(report.redisUs, 0)} |`,
  ].join('\n');
}

/** sha1 or library name → a readable name: this service's scripts as the default loaders build them, and BullMQ's. */
function scriptNames(): Map<string, string> {
  const names = new Map<string, string>();
  const loader = ScriptLoader.default();
  for (const name of SCRIPT_NAMES) {
    names.set(sha1(loader.source(name)), `${name}.lua`);
    // A script with includes runs as a function (FCALL carries its library's name).
    const library = loader.library(name)?.name;
    if (library) names.set(library, `${name}.lua`);
  }
  for (const name of FLEET_SCRIPT_NAMES) names.set(sha1(fleetScripts().source(name)), `${name}.lua`);
  // BullMQ defines each command from its script text, so its EVALSHA carries sha1(content).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const bullmqScripts = require('bullmq/dist/cjs/scripts') as Record<string, { name: string; content: string }>;
  for (const script of Object.values(bullmqScripts)) names.set(sha1(script.content), `BullMQ ${script.name}`);
  return names;
}

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}
