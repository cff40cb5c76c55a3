import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { SessionRef } from '@codemode/contracts';
import { KeySpace } from '../platform/keys';
import { ScriptLoader } from '../platform/script-loader';
import { endedFields } from '../log/projections/views';
import { RunLedger } from './run-ledger';
import { RunListing } from './run-listing';
import { completed, deleteKeys, newRunId, requestData, storedRun, testPrefix, testRedis } from '../test-support';

// A finished run's hash kept compact packs what only a view reads into one field, `ended`
// (lua/includes/ended-run.lua); views.ts reads it back.
const prefix = testPrefix('ended-run');
const keys = new KeySpace(prefix);
let redis: Redis;
let packing: RunLedger;
let plain: RunLedger;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `ended-${++n}` });

beforeAll(async () => {
  redis = await testRedis('ended-run');
  packing = new RunLedger(redis, keys);
  plain = new RunLedger(redis, keys, ScriptLoader.withSettings({ compactRuns: false }));
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

const lua = (name: string) => readFileSync(join(__dirname, '..', 'lua', 'includes', `${name}.lua`), 'utf8');

/** packed_ended of each case, and unpack_ended of what it packed, as Lua answers them. */
async function throughLua(
  cases: Array<Record<string, string>>,
): Promise<Array<{ packed: string | null; withOwner: boolean; back: Record<string, string> }>> {
  const driver = `
    local answers = {}
    for i, c in ipairs(cjson.decode(ARGV[1])) do
      local packed, withOwner = packed_ended(c)
      local back = packed and cjson.encode(unpack_ended(packed)) or '{}'
      answers[i] = { packed or false, withOwner and 1 or 0, back }
    end
    return answers`;
  const reply = (await redis.eval(`${lua('session-keys')}\n${lua('ended-run')}\n${driver}`, 0, JSON.stringify(cases))) as Array<
    [string | null, number, string]
  >;
  return reply.map(([packed, withOwner, back]) => ({
    packed,
    withOwner: withOwner === 1,
    back: JSON.parse(back) as Record<string, string>,
  }));
}

describe('ended-run.lua packs and views.ts reads back', () => {
  const created = '1796608061075';
  const created36 = Number(created).toString(36);
  const cases: Array<Record<string, string>> = [
    // a trivial run: claimed and ended in one millisecond, its terminal event that millisecond's second entry
    {
      createdAt: created,
      startedAt: '1796608061109',
      endedAt: '1796608061109',
      resultEvent: '1796608061109-1',
      replaySafe: 'true',
      owner: 'vm-1',
    },
    // the terminal event's id in another millisecond (the stream's last id ahead of the clock)
    {
      createdAt: created,
      startedAt: '1796608061109',
      endedAt: '1796608061200',
      resultEvent: '1796608099999-0',
      replaySafe: 'false',
      owner: 'w',
    },
    // the clock stepped back between the request and the end
    { createdAt: created, startedAt: '1796608061000', endedAt: '1796608060990', resultEvent: '1796608060990-0', owner: 'w' },
    // ended before any worker claimed it: no start, no result, no owner
    { createdAt: created, endedAt: '1796608071075' },
    // a worker id with commas, a released run (owner ''), a restartSafe run
    { createdAt: created, startedAt: created, endedAt: created, resultEvent: `${created}-2`, owner: 'pod,a,b', restartSafe: 'true' },
    { createdAt: created, startedAt: created, endedAt: created, owner: '' },
  ];
  const refused: Array<Record<string, string>> = [
    // an earlier release's times, restartSafe 'false', an unknown replaySafe: left as they are
    { createdAt: '2026-12-07T01:47:41.075Z', endedAt: created },
    { createdAt: created, endedAt: created, restartSafe: 'false' },
    { createdAt: created, endedAt: created, replaySafe: 'maybe' },
    { createdAt: created, endedAt: 'x' },
  ];

  test('every field comes back as it was, through Lua and through the view', async () => {
    const answers = await throughLua(cases);
    for (const [i, answer] of answers.entries()) {
      expect(answer.packed).not.toBeNull();
      expect(answer.withOwner).toBe('owner' in cases[i]);
      expect(answer.back).toEqual(cases[i]);
      expect(endedFields(answer.packed!)).toEqual(cases[i]);
    }
    expect(answers[0].packed).toBe(`${created36},34,34,-1,r,vm-1`);
    expect(answers[1].packed).toBe(`${created36},34,125,1796608099999-0,u,w`);
    expect(answers[2].packed).toBe(`${created36},-75,-85,-0,,w`);
    expect(answers[3].packed).toBe(`${created36},,10000,,`);
    expect(answers[5].packed).toBe(`${created36},0,0,,,`);
  });

  test('an owner that would take the value past 64 bytes stays a field of its own', async () => {
    const long = { createdAt: created, startedAt: created, endedAt: created, resultEvent: `${created}-1`, owner: 'w'.repeat(60) };
    const [answer] = await throughLua([long]);
    expect(answer).toEqual({ packed: `${created36},0,0,-1,`, withOwner: false, back: { ...long, owner: undefined } });
    expect(endedFields(answer.packed!)).toEqual({ createdAt: created, startedAt: created, endedAt: created, resultEvent: `${created}-1` });
  });

  test('fields not in the shapes it packs are left as they are', async () => {
    for (const answer of await throughLua(refused)) expect(answer.packed).toBeNull();
  });
});

describe('a finished run kept compact', () => {
  /** A restartSafe run claimed by `owner`, ended, through `runs`; the same run id for both writers. */
  async function ended(runs: RunLedger, runId: string, owner: string): Promise<SessionRef> {
    const ref = newRef();
    await runs.request(ref, runId, { ...requestData('ended', 'return 1'), restartSafe: true });
    await runs.start(ref, runId, { workerId: owner, epoch: 1, replyTo: '' });
    await runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(1) });
    return ref;
  }

  test.each([
    ['a short worker id, packed with the rest', 'w-1', ['ended', 'epoch', 'status', 'title']],
    ['a long worker id, kept as a field', `worker-${'x'.repeat(60)}`, ['ended', 'epoch', 'owner', 'status', 'title']],
  ])('with %s: one field for what only a view reads; views, listings and a wait answer as in full', async (_, owner, fields) => {
    const runId = newRunId();
    const compact = await ended(packing, runId, owner);
    const full = await ended(plain, runId, owner);
    expect(Object.keys(await storedRun(redis, keys, compact, runId)).sort()).toEqual(fields);
    const times = <T extends object | null>(view: T) =>
      view && { ...view, sessionId: '', createdAt: '', startedAt: '', endedAt: '', updatedAt: '' };
    const [compactView, fullView] = [await packing.get(compact, runId), await plain.get(full, runId)];
    expect(times(compactView)).toEqual(times(fullView));
    expect(compactView).toMatchObject({ owner, restartSafe: true, status: 'completed', lastResult: completed(1) });
    const listing = new RunListing(redis, keys, 24 * 3600 * 1000);
    const [compactListed, fullListed] = [(await listing.page(compact, 10)).runs, (await listing.page(full, 10)).runs];
    expect(compactListed.map(times)).toEqual(fullListed.map(times));
    // A wait on it (reserve-resume.lua) answers its status, restartSafe and owner as from a full hash.
    const reserve = (runs: RunLedger, ref: SessionRef) => runs.reserveResume(ref, runId, 'tok', 60_000);
    expect(await reserve(packing, compact)).toEqual(await reserve(plain, full));
    expect(await reserve(packing, compact)).toMatchObject({ reserved: false, status: 'completed', restartSafe: true, owner });
  });
});
