import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { SessionRef } from '@codemode/contracts';
import { KeySpace } from './keys';
import { ScriptLoader } from './script-loader';
import { pruneScriptLibraries, scriptLibrary } from './script-library';
import { RunLedger } from '../runs/run-ledger';
import { EventLog } from '../log/event-log';
import { StoreFullError, StoreUnavailableError } from './errors';
import { completed, deleteKeys, newRunId, requestData, TEST_REDIS_URL, testPrefix, testRedis } from '../test-support';
import { PrivateRedis } from '../../../../test/utils/private-redis';
import { SCRIPT_NAMES } from './script-loader';

const prefix = testPrefix('script-functions');
const keys = new KeySpace(prefix);
let redis: Redis;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `s-${++n}` });

/** A loader whose libraries no other spec loads (its settings are its own), so what it loads is its doing. */
const ownLoader = (): ScriptLoader => ScriptLoader.withSettings({ liveRunMaxIdleSeconds: 86_400 + Math.floor(Math.random() * 1e6) });

const libraryName = (loader: ScriptLoader, name: 'request-run'): string => loader.library(name)?.name ?? '';

const loaded = async (name: string): Promise<boolean> =>
  ((await redis.call('FUNCTION', 'LIST', 'LIBRARYNAME', name)) as unknown[]).length > 0;

/** The millisecond of the `run.requested` entry of `runId`, from its stream id. */
async function requestedAtMs(ref: SessionRef, runId: string): Promise<number> {
  const entries = await redis.xrange(keys.events(ref), '-', '+');
  const entry = entries.find(([, fields]) => fields.includes(runId));
  return Number(entry?.[0].split('-')[0]);
}

/** A request in a new session through `runs` answers created, and its run reads `requested`. */
async function requestLands(runs: RunLedger): Promise<void> {
  const ref = newRef();
  const runId = newRunId();
  await expect(runs.request(ref, runId, requestData())).resolves.toEqual({ created: true });
  expect(await redis.hget(keys.run(ref, runId), 'status')).toBe('requested');
}

beforeAll(async () => {
  redis = await testRedis('script-functions');
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

describe('scripts with includes run as Redis Functions', () => {
  it('loads the library at the first call and runs the script as its function', async () => {
    const loader = ownLoader();
    const runs = new RunLedger(redis, keys, loader);
    const name = libraryName(loader, 'request-run');
    expect(await loaded(name)).toBe(false);
    await requestLands(runs);
    expect(await loaded(name)).toBe(true);
    await redis.call('FUNCTION', 'DELETE', name);
  });

  it('starts every call afresh: a second call does not see the first call clock read', async () => {
    const loader = ownLoader();
    const runs = new RunLedger(redis, keys, loader);
    const ref = newRef();
    const [first, second] = [newRunId(), newRunId()];
    await runs.request(ref, first, requestData());
    await new Promise((resolve) => setTimeout(resolve, 25));
    await runs.request(ref, second, requestData());
    // A clock read kept from the first call would give the second entry the first one's millisecond.
    expect((await requestedAtMs(ref, second)) - (await requestedAtMs(ref, first))).toBeGreaterThanOrEqual(20);
    await redis.call('FUNCTION', 'DELETE', libraryName(loader, 'request-run'));
  });

  it('loads the library again when the server lost it (restart, FUNCTION FLUSH), and the call answers', async () => {
    const loader = ownLoader();
    const runs = new RunLedger(redis, keys, loader);
    const name = libraryName(loader, 'request-run');
    await runs.request(newRef(), newRunId(), requestData());
    await redis.call('FUNCTION', 'DELETE', name);
    await requestLands(runs);
    expect(await loaded(name)).toBe(true);
    await redis.call('FUNCTION', 'DELETE', name);
  });

  it.each([
    ['FUNCTION', '-function'],
    ['FCALL', '-fcall'],
  ])('runs the script with EVALSHA for a client whose ACL refuses %s, and loads nothing', async (_what, rule) => {
    const user = `script-functions-${randomUUID()}`;
    const password = randomUUID();
    await redis.call('ACL', 'SETUSER', user, 'on', `>${password}`, '~*', '&*', '+@all', rule);
    const limited = new Redis(TEST_REDIS_URL, { username: user, password, lazyConnect: true });
    try {
      await limited.connect();
      const loader = ownLoader();
      const runs = new RunLedger(limited, keys, loader);
      const name = libraryName(loader, 'request-run');
      await requestLands(runs);
      await requestLands(runs);
      expect(await loaded(name)).toBe(false);
    } finally {
      limited.disconnect();
      await redis.call('ACL', 'DELUSER', user);
    }
  });

  it('runs with EVALSHA a script whose library the server would not load, after one try, and tells it once', async () => {
    // `...` is legal in an EVAL'd chunk but not inside the function its library wraps it in.
    const dir = mkdtempSync(join(tmpdir(), 'script-functions-'));
    writeFileSync(join(dir, 'twice.lua'), 'local function twice(x) return x * 2 end\n');
    writeFileSync(join(dir, 'vararg.lua'), `--- @include "twice"\nreturn twice(tonumber(ARGV[1])) + select('#', ...)\n`);
    const client = new Redis(TEST_REDIS_URL);
    try {
      const loader = new ScriptLoader(dir, ['vararg'], {});
      const refusals: [string, string][] = [];
      loader.onLibraryRefused((library, reason) => refusals.push([library, reason]));
      const fcalls = jest.spyOn(client, 'fcall');
      for (const n of [1, 2, 3]) await expect(loader.run(client, 'vararg', [], [n])).resolves.toBe(n * 2);
      expect(fcalls).toHaveBeenCalledTimes(1);
      expect(refusals).toEqual([[loader.library('vararg')?.name, expect.stringMatching(/^ERR Error compiling function/)]]);
    } finally {
      client.disconnect();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('makes the includes at the first call (they use math) and gives their per-call locals their first value at every call', async () => {
    const { name, code } = scriptLibrary('local LIMIT = math.min(3, 4)\nlocal seen = nil', 'seen = (seen or 0) + LIMIT\nreturn seen');
    await redis.call('FUNCTION', 'LOAD', code);
    try {
      expect(await redis.fcall(name, 0)).toBe(3);
      expect(await redis.fcall(name, 0)).toBe(3);
    } finally {
      await redis.call('FUNCTION', 'DELETE', name);
    }
  });

  it('prunes the libraries no loader of this process runs (an earlier release), and keeps its own', async () => {
    const [current, earlier] = [ownLoader(), ownLoader()];
    await new RunLedger(redis, keys, current).request(newRef(), newRunId(), requestData());
    await new RunLedger(redis, keys, earlier).request(newRef(), newRunId(), requestData());
    const [own, stale] = [libraryName(current, 'request-run'), libraryName(earlier, 'request-run')];
    await expect(pruneScriptLibraries(redis, [current])).resolves.toBeGreaterThanOrEqual(1);
    expect(await loaded(stale)).toBe(false);
    expect(await loaded(own)).toBe(true);
    // A process of the earlier release still running loads it again at its next call: never broken by a prune.
    await requestLands(new RunLedger(redis, keys, earlier));
    expect(await loaded(stale)).toBe(true);
    await Promise.all([own, stale].map((name) => redis.call('FUNCTION', 'DELETE', name)));
  });

  it('loads every library of this library: each script with includes compiles as a function', async () => {
    const loader = ScriptLoader.withSettings({});
    const libraries = SCRIPT_NAMES.flatMap((name) => loader.library(name) ?? []);
    expect(libraries.length).toBeGreaterThanOrEqual(19);
    for (const library of libraries) {
      await redis.call('FUNCTION', 'LOAD', library.code).catch((err: Error) => {
        if (!/already exists/.test(err.message)) throw new Error(`${library.name}: ${err.message}`);
      });
    }
  });
});

describe('a Redis at maxmemory', () => {
  let full: PrivateRedis;
  let admin: Redis;

  beforeAll(async () => {
    full = await PrivateRedis.start();
    admin = new Redis(full.url);
  });

  afterAll(async () => {
    admin?.disconnect();
    await full?.cleanup();
  });

  it('still answers what writes nothing, as an EVAL did: a claim sent again after its reply was lost', async () => {
    const runs = new RunLedger(admin, keys, ownLoader());
    const ref = newRef();
    const runId = newRunId();
    const claim = { workerId: 'w-1', epoch: 1, replyTo: '', claimToken: randomUUID() };
    await runs.request(ref, runId, requestData());
    await expect(runs.start(ref, runId, claim)).resolves.toEqual({ started: true });
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
    await admin.config('SET', 'maxmemory', String(used - 1024 * 1024));
    try {
      // A function is refused at maxmemory before it runs; the loader sends the call again EVAL'd.
      await expect(runs.start(ref, runId, claim)).resolves.toEqual({ started: true });
      await expect(runs.request(newRef(), newRunId(), requestData())).rejects.toBeInstanceOf(StoreFullError);
      // A batch's append catches the refusal per event: the store is full, not a bug.
      const appended = await new EventLog(admin, keys, ownLoader()).appendAll(ref, [
        { type: 'tool.called', runId, epoch: 1, data: { callId: 'c1', tool: 'ls', source: 'openclaw', inputBytes: 2, input: {} } },
      ]);
      expect(appended).toEqual([expect.any(StoreFullError)]);
    } finally {
      await admin.config('SET', 'maxmemory', '0');
    }
  });

  /** A restartSafe run requested, claimed by w-1 and completed with 7, through a ledger of its own loader. */
  async function endedRun(): Promise<{ runs: RunLedger; ref: SessionRef; runId: string }> {
    const runs = new RunLedger(admin, keys, ownLoader());
    const ref = newRef();
    const runId = newRunId();
    await runs.request(ref, runId, { ...requestData(), restartSafe: true });
    await runs.start(ref, runId, { workerId: 'w-1', epoch: 1, replyTo: '' });
    await runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(7) });
    return { runs, ref, runId };
  }

  /**
   * Runs `check` while no replica answers (`min-replicas-to-write 1`): Redis refuses every write and
   * every function it is not told writes nothing; a request through `runs` is refused as unavailable.
   */
  async function whileWritesRefused(runs: RunLedger, check: () => Promise<void>): Promise<void> {
    await admin.config('SET', 'min-replicas-to-write', '1');
    try {
      await check();
      await expect(runs.request(newRef(), newRunId(), requestData())).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await admin.config('SET', 'min-replicas-to-write', '0');
    }
  }

  it('runs a script marked `--- @no-writes` as a function Redis knows writes nothing: a run read answers where writes are refused', async () => {
    const { runs, ref, runId } = await endedRun();
    // Read once first, so that read-run's library is loaded (FUNCTION LOAD is a write).
    await expect(runs.get(ref, runId)).resolves.toMatchObject({ status: 'completed' });
    await whileWritesRefused(runs, async () => {
      await expect(runs.get(ref, runId)).resolves.toMatchObject({ status: 'completed', lastResult: completed(7) });
    });
  });

  it('serves a live tail of a folded run where writes are refused: its mark on the session is best effort', async () => {
    const { runs, ref } = await endedRun();
    const log = new EventLog(admin, keys, ownLoader());
    // Its page script loaded first (FUNCTION LOAD is a write).
    expect((await log.read(ref, { limit: 10 })).events).toHaveLength(3);
    await whileWritesRefused(runs, async () => {
      const controller = new AbortController();
      const tailed: string[] = [];
      for await (const event of log.follow(ref, '0-0', controller.signal)) {
        tailed.push(event.type);
        if (tailed.length === 3) controller.abort();
      }
      expect(tailed).toEqual(['run.requested', 'run.started', 'run.completed']);
    });
  });

  it('sends again EVAL’d a function Redis refused while it refuses writes: an answer that writes nothing still comes, as an EVAL’d script’s did', async () => {
    const { runs, ref, runId } = await endedRun();
    // Its library loaded first (FUNCTION LOAD is a write): a wait on the ended run, answered from its hash.
    const answer = await runs.reserveResume(ref, runId, 'tok-1', 60_000);
    expect(answer).toMatchObject({ reserved: false, status: 'completed', restartSafe: true, owner: 'w-1' });
    await whileWritesRefused(runs, async () => {
      await expect(runs.reserveResume(ref, runId, 'tok-2', 60_000)).resolves.toEqual(answer);
    });
  });
});
