import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { ScriptLoader, SCRIPT_NAMES } from '@codemode/events';
import { FLEET_SCRIPT_NAMES, fleetScripts } from '@codemode/fleet';
import { REDIS_URL } from '../test/utils/test-stack';
import { fmt } from './stats';

export interface RedisCostReport {
  execs: number;
  /** Commands sent by the api and the worker per exec (scripts count once, their inner commands not at all). */
  roundTrips: number;
  /** Microseconds Redis spent executing commands per exec, as its slow log times them. */
  redisUs: number;
  /** Per script, and per plain command by name, most Redis time first. */
  scripts: { name: string; calls: number; us: number }[];
}

/**
 * Redis work per exec, by script: the slow log at threshold 0 times every command Redis runs,
 * the commands inside a script included, for `execs` sequential execs. A script's own time
 * includes its inner commands, so only top-level commands are summed. Inner commands are told
 * apart by their case: ioredis sends command names in lower case, and the Lua of this service
 * and of BullMQ calls them in upper case.
 */
export async function measureRedisCost(execs: number, exec: () => Promise<unknown>, redisUrl = REDIS_URL): Promise<RedisCostReport> {
  const redis = new Redis(redisUrl);
  const names = scriptNames();
  const [, threshold] = await redis.config('GET', 'slowlog-log-slower-than');
  const [, maxLen] = await redis.config('GET', 'slowlog-max-len');
  try {
    await redis.config('SET', 'slowlog-max-len', '1000000');
    await redis.config('SET', 'slowlog-log-slower-than', '0');
    await redis.slowlog('RESET');
    for (let i = 0; i < execs; i += 1) await exec();
    const entries = (await redis.slowlog('GET', '-1')) as [number, number, number, string[]][];
    await redis.config('SET', 'slowlog-log-slower-than', threshold);
    let roundTrips = 0;
    let redisUs = 0;
    const scripts = new Map<string, { calls: number; us: number }>();
    for (const [, , us, args] of entries) {
      const command = args[0] ?? '';
      if (command !== command.toLowerCase() || command.startsWith('slowlog') || command.startsWith('config')) continue;
      roundTrips += 1;
      redisUs += us;
      // A plain command is a row of its own (`zadd`, `hgetall`…); a script, by its name.
      const sha = command === 'eval' ? sha1(args[1] ?? '') : command === 'evalsha' ? (args[1] ?? '') : '';
      const name = sha === '' ? `command ${command}` : (names.get(sha) ?? `script ${sha.slice(0, 8)}`);
      const row = scripts.get(name) ?? { calls: 0, us: 0 };
      row.calls += 1;
      row.us += us;
      scripts.set(name, row);
    }
    return {
      execs,
      roundTrips: roundTrips / execs,
      redisUs: redisUs / execs,
      scripts: [...scripts].map(([name, row]) => ({ name, calls: row.calls / execs, us: row.us / execs })).sort((a, b) => b.us - a.us),
    };
  } finally {
    await redis.config('SET', 'slowlog-log-slower-than', threshold);
    await redis.config('SET', 'slowlog-max-len', maxLen);
    redis.disconnect();
  }
}

export function redisCostTable(report: RedisCostReport, what = ''): string {
  return [
    `| per exec \`return 1+1\` (${report.execs} sequential${what}) | calls | Redis µs |`,
    '|---|---|---|',
    ...report.scripts.map((s) => `| ${s.name} | ${fmt(s.calls)} | ${fmt(s.us, 0)} |`),
    `| **all commands (round trips from api and worker)** | ${fmt(report.roundTrips, 1)} | ${fmt(report.redisUs, 0)} |`,
  ].join('\n');
}

/** sha1 → a readable name: this service's scripts as the default loaders build them, and BullMQ's. */
function scriptNames(): Map<string, string> {
  const names = new Map<string, string>();
  const loader = ScriptLoader.default();
  for (const name of SCRIPT_NAMES) names.set(sha1(loader.source(name)), `${name}.lua`);
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
