import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CodeModeResult } from '@codemode/contracts';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from './utils/test-stack';
import { endedRunError } from './chaos/chaos-helpers';

jest.setTimeout(90_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function expectWaiting(result: CodeModeResult): Extract<CodeModeResult, { status: 'waiting' }> {
  if (result.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(result)}`);
  return result;
}

/**
 * The replay-safe exec/wait cases, run twice: with parked VMs kept in memory, and with
 * CODEMODE_ALWAYS_REPLAY=1, where every parked run is dropped as it parks and every wait rebuilds
 * it by replay (SPEC §6). The answers must be the same.
 */
describe.each([
  ['parked VMs kept in memory', {}],
  ['CODEMODE_ALWAYS_REPLAY=1', { CODEMODE_ALWAYS_REPLAY: '1' }],
])('replay-safe runs through wait: %s', (mode, env: Record<string, string>) => {
  const replays = env.CODEMODE_ALWAYS_REPLAY === '1';
  let stack: TestStack;
  let client: CodeModeClient;
  beforeAll(async () => {
    stack = await TestStack.start({ env });
    client = stack.client();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('resumes across several yields with the same clock and random values, output only once', async () => {
    const code = `
      const t0 = Date.now(); const r0 = Math.random(); const d0 = new Date().toISOString();
      console.log("first leg");
      await yield_control("one");
      const t1 = Date.now(); const r1 = Math.random();
      console.log("second leg");
      await yield_control("two");
      console.log("third leg");
      return { t0, r0, d0, t1, r1, same: Date.parse(d0) - t0 >= 0 && Date.parse(d0) - t0 < 1000, later: Date.now() >= t1 };
    `;
    const first = expectWaiting(await client.exec('legs', { title: 'legs', code, restartSafe: true }));
    expect(first).toMatchObject({ reason: 'yield', replaySafe: true, output: [{ type: 'text', text: 'first leg' }] });
    const second = expectWaiting(await client.wait('legs', first.runId));
    expect(second).toMatchObject({ runId: first.runId, reason: 'yield', output: [{ type: 'text', text: 'second leg' }] });
    const done = await client.wait('legs', first.runId);
    expect(done).toMatchObject({ status: 'completed', replaySafe: true, output: [{ type: 'text', text: 'third leg' }] });
    const value = (done as { value: { t0: number; r0: number; t1: number; r1: number; same: boolean; later: boolean } }).value;
    expect(value.same).toBe(true);
    expect(value.later).toBe(true);
    expect(value.t1).toBeGreaterThanOrEqual(value.t0);
    expect(value.r0).not.toBe(value.r1);

    const events = (await client.events('legs', { limit: 1000 })).events;
    const types = events.map((e) => e.type);
    expect(types.filter((t) => /^run\.(completed|failed|expired|lost)$/.test(t))).toEqual(['run.completed']);
    expect(types.filter((t) => t === 'run.recovered')).toHaveLength(replays ? 2 : 0);
    expect(types.filter((t) => t === 'run.released')).toHaveLength(replays ? 2 : 0);
  });

  it('answers core read/ls calls from the log on replay, and reads files only once', async () => {
    const sid = 'files';
    await client.putSession(sid, {});
    const workspace = join(stack.workspaceRoot, 'default', sid);
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(workspace, 'note.txt'), 'version one');
    const code = `
      const before = await read({ path: "note.txt" });
      await yield_control();
      const after = await read({ path: "note.txt" });
      return { before: JSON.stringify(before).includes("version one"), after: JSON.stringify(after).includes("version two") };
    `;
    const first = expectWaiting(await client.exec(sid, { title: 'read', code, restartSafe: true }));
    // The file changes while the run is parked: a replay must still see what the first read saw.
    writeFileSync(join(workspace, 'note.txt'), 'version two');
    expect(await client.wait(sid, first.runId)).toMatchObject({ status: 'completed', value: { before: true, after: true } });
    const events = (await client.events(sid, { limit: 1000 })).events.filter((e) => e.runId === first.runId);
    expect(events.filter((e) => e.type === 'tool.called').map((e) => e.data.callId)).toEqual(['bridge:callValue:1', 'bridge:callValue:2']);
  });

  it('parks on a pending timer, which keeps its due time, and completes it through wait', async () => {
    const sid = 'timer';
    await client.putSession(sid, { codeMode: { timeoutMs: 300 } });
    const first = expectWaiting(
      await client.exec(sid, { title: 't', code: 'await new Promise(r => setTimeout(r, 500)); return "slept"', restartSafe: true }),
    );
    expect(first).toMatchObject({ reason: 'pending_tools', pendingToolCalls: [{ id: 'bridge:sleep:1', method: 'sleep' }] });
    // A timer is not the platform's to answer, whoever holds the run.
    const refused = await client.raw('POST', `/v1/sessions/${sid}/runs/${first.runId}/tool-results`, {
      body: JSON.stringify({ results: [{ id: 'bridge:sleep:1', ok: true, value: 1 }] }),
    });
    expect(refused.status).toBe(409);
    await sleep(600);
    const started = Date.now();
    expect(await client.wait(sid, first.runId)).toMatchObject({ status: 'completed', value: 'slept', replaySafe: true });
    expect(Date.now() - started).toBeLessThan(250);
  });

  it('refuses waits in SPEC order and leaves the run parked', async () => {
    const first = expectWaiting(
      await client.exec('owner-r', { title: 'y', code: 'await yield_control(); return "mine";', restartSafe: true }),
    );
    expect(await client.wait('other-r', first.runId)).toMatchObject({
      status: 'failed',
      code: 'invalid_input',
      error: 'code mode run belongs to a different session.',
    });
    expect((await client.getRun('owner-r', first.runId)).status).toBe('waiting');
    expect(await client.wait('owner-r', first.runId)).toMatchObject({ status: 'completed', value: 'mine' });
    expect(await client.wait('owner-r', first.runId)).toMatchObject({
      status: 'failed',
      error: endedRunError('owner-r', first.runId),
    });
  });

  it('lets exactly one of two concurrent waits resume the run', async () => {
    const first = expectWaiting(
      await client.exec('race-r', {
        title: 'y',
        code: 'await yield_control(); await new Promise(r => setTimeout(r, 300)); return 1;',
        restartSafe: true,
      }),
    );
    const answers = await Promise.all([client.wait('race-r', first.runId), client.wait('race-r', first.runId)]);
    const statuses = answers.map((a) => (a.status === 'failed' ? a.error : a.status)).sort();
    expect(statuses).toEqual(['code mode run is already being resumed.', 'completed']);
  });

  it('aborts a parked run; the run ends aborted once', async () => {
    const first = expectWaiting(await client.exec('abort-r', { title: 'y', code: 'await yield_control(); return 1;', restartSafe: true }));
    expect(await client.abort('abort-r', first.runId)).toMatchObject({
      status: 'failed',
      code: 'aborted',
      error: 'code mode execution aborted',
      replaySafe: true,
    });
    expect(await client.wait('abort-r', first.runId)).toMatchObject({ error: endedRunError('abort-r', first.runId) });
  });

  it('parks on a replay-safe platform tool; its answer from tool-results reaches the cell through wait', async () => {
    const sid = 'platform';
    await client.putTools(sid, [{ name: 'ask', description: 'answered by the platform', replaySafe: true }]);
    const first = expectWaiting(
      await client.exec(sid, { title: 'ask', code: 'const a = await ask({ q: 1 }); return a.answer * 2;', restartSafe: true }),
    );
    expect(first).toMatchObject({ reason: 'pending_tools', pendingToolCalls: [{ id: 'bridge:callValue:1' }] });
    expect(await client.toolResults(sid, first.runId, [{ id: 'bridge:callValue:1', ok: true, value: { answer: 21 } }])).toEqual({
      accepted: 1,
    });
    expect(await client.wait(sid, first.runId)).toMatchObject({ status: 'completed', value: 42, replaySafe: true });
  });

  it('takes the same branch on Math.random after the wait as before it', async () => {
    const first = expectWaiting(
      await client.exec('rand', {
        title: 'd',
        code: 'const r = Math.random(); text(r < 0.5 ? "low" : "high"); await yield_control(); return r;',
        restartSafe: true,
      }),
    );
    const done = await client.wait('rand', first.runId);
    expect(done).toMatchObject({ status: 'completed' });
    const r = (done as { value: number }).value;
    expect(first.output).toEqual([{ type: 'text', text: r < 0.5 ? 'low' : 'high' }]);
  });
});

describe('replay-safe runs whose worker goes away', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ workers: 2, env: { CODEMODE_LEASE_MS: '1000' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const ownerOf = async (client: CodeModeClient, sid: string, runId: string) => {
    const owner = (await client.getRun(sid, runId)).owner;
    const worker = stack.workers.find((w) => w.alive && owner?.includes(`-${w.pid}-`));
    if (!worker) throw new Error(`no live worker owns ${runId} (owner ${owner})`);
    return worker;
  };

  it('SIGTERM hands parked runs over: the next wait resumes them at once, replay-safe or not (SPEC §12)', async () => {
    const client = stack.client();
    const safe = expectWaiting(
      await client.exec('handover', { title: 's', code: 'const r = Math.random(); await yield_control(); return r;', restartSafe: true }),
    );
    const victim = await ownerOf(client, 'handover', safe.runId);
    // A plain run parked on the same worker (retry until the queue hands one to it).
    let plain: string | undefined;
    for (let i = 0; i < 20 && !plain; i += 1) {
      const parked = expectWaiting(await client.exec('handover', { title: 'p', code: 'await yield_control(); return 1;' }));
      if ((await ownerOf(client, 'handover', parked.runId)) === victim) plain = parked.runId;
      else await client.abort('handover', parked.runId);
    }
    expect(plain).toBeDefined();
    expect(await victim.stop()).toBe(0);
    const run = await client.getRun('handover', safe.runId);
    expect(run).toMatchObject({ status: 'waiting', owner: null });
    const started = Date.now();
    const done = await client.wait('handover', safe.runId);
    expect(done).toMatchObject({ status: 'completed', replaySafe: true });
    // No lease had to lapse: the run was released.
    expect(Date.now() - started).toBeLessThan(1000);
    // SPEC §12: a run that is not replay-safe is handed over too, and restored from its image.
    expect(await client.wait('handover', plain!)).toMatchObject({ status: 'completed', value: 1 });
    const events = (await client.events('handover', { limit: 1000 })).events;
    const safeTypes = events.filter((e) => e.runId === safe.runId).map((e) => e.type);
    expect(safeTypes).toEqual([
      'run.requested',
      'run.started',
      'run.parked',
      'run.released',
      'run.recovered',
      'run.resumed',
      'run.completed',
    ]);
    expect(
      events
        .filter((e) => e.runId === plain)
        .map((e) => e.type)
        .slice(-1),
    ).toEqual(['run.completed']);
    await stack.addWorker();
  });

  it('a worker that stalls past its lease loses its parked run to replay and does not write it again', async () => {
    const client = stack.client();
    const first = expectWaiting(
      await client.exec('stall', { title: 's', code: 'await yield_control(); await yield_control(); return "twice";', restartSafe: true }),
    );
    const stalled = await ownerOf(client, 'stall', first.runId);
    process.kill(stalled.pid, 'SIGSTOP');
    try {
      await sleep(1500);
      const second = expectWaiting(await client.wait('stall', first.runId));
      expect(second.runId).toBe(first.runId);
      const moved = await client.getRun('stall', first.runId);
      expect(moved.epoch).toBe(2);
      expect(moved.owner).not.toContain(`-${stalled.pid}-`);
    } finally {
      process.kill(stalled.pid, 'SIGCONT');
    }
    // The stalled worker wakes up, finds its lease lapsed and gives its parked run up: fenced by
    // owner and epoch, it writes nothing for a run that moved.
    await sleep(1000);
    expect(await client.wait('stall', first.runId)).toMatchObject({ status: 'completed', value: 'twice' });
    const types = (await client.events('stall', { limit: 1000 })).events.filter((e) => e.runId === first.runId).map((e) => e.type);
    expect(types).toEqual([
      'run.requested',
      'run.started',
      'run.parked',
      'run.recovered',
      'run.resumed',
      'run.parked',
      'run.resumed',
      'run.completed',
    ]);
  });

  it('a worker killed during a wait: a replay-safe run is rebuilt at once and finishes its leg; another run is lost', async () => {
    const client = stack.client();
    await client.putSession('midleg', { codeMode: { timeoutMs: 2000 } });
    const safe = expectWaiting(
      await client.exec('midleg', {
        title: 's',
        code: 'const a = await ls({}); await yield_control(); await new Promise((r) => setTimeout(r, 1500)); return "done";',
        restartSafe: true,
      }),
    );
    const victim = await ownerOf(client, 'midleg', safe.runId);
    let plain: string | undefined;
    for (let i = 0; i < 20 && !plain; i += 1) {
      const parked = expectWaiting(
        await client.exec('midleg', {
          title: 'p',
          code: 'await yield_control(); await new Promise((r) => setTimeout(r, 1500)); return 1;',
        }),
      );
      if ((await ownerOf(client, 'midleg', parked.runId)) === victim) plain = parked.runId;
      else await client.abort('midleg', parked.runId);
    }
    expect(plain).toBeDefined();
    // Both legs start on the victim, which dies while they sleep.
    const cutOff = [client.wait('midleg', safe.runId), client.wait('midleg', plain!)];
    await sleep(400);
    expect((await client.getRun('midleg', safe.runId)).status).toBe('running');
    await victim.kill();
    const [safeAnswer, plainAnswer] = await Promise.all(cutOff);
    expect(plainAnswer).toMatchObject({ status: 'failed', code: 'runtime_unavailable' });
    // SPEC §16: the replay-safe leg is rebuilt at once on the other worker; its wait answers the
    // outcome, or `waiting` with the runId when the rebuild did not end within budget plus grace.
    let safeResult = safeAnswer;
    if (safeResult.status === 'waiting') {
      expect(safeResult).toMatchObject({ runId: safe.runId, reason: 'pending_tools' });
      safeResult = await client.wait('midleg', safe.runId);
    }
    // objectContaining, not toMatchObject: a failed answer is printed whole (its error says why).
    expect(safeResult).toEqual(expect.objectContaining({ status: 'completed', value: 'done', replaySafe: true }));
    await sleep(1200);
    expect(await client.wait('midleg', plain!)).toMatchObject({ status: 'failed', error: endedRunError('midleg', plain!) });
    const events = (await client.events('midleg', { limit: 1000 })).events;
    const terminal = (runId: string) =>
      events.filter((e) => e.runId === runId && /^run\.(completed|failed|expired|lost)$/.test(e.type)).map((e) => e.type);
    expect(terminal(safe.runId)).toEqual(['run.completed']);
    expect(terminal(plain!)).toEqual(['run.lost']);
    // The ls call settled before the park was answered from the log, not made again.
    expect(events.filter((e) => e.runId === safe.runId && e.type === 'tool.called')).toHaveLength(1);
    await stack.addWorker();
  });

  it('parked runs whose worker died expire after snapshotTtlSeconds with one run.expired, waited on or not', async () => {
    const client = stack.client();
    await client.putSession('ttl', { codeMode: { snapshotTtlSeconds: 1 } });
    const safe = expectWaiting(await client.exec('ttl', { title: 's', code: 'await yield_control(); return 1;', restartSafe: true }));
    const victim = await ownerOf(client, 'ttl', safe.runId);
    let plain: string | undefined;
    for (let i = 0; i < 20 && !plain; i += 1) {
      const parked = expectWaiting(await client.exec('ttl', { title: 'p', code: 'await yield_control(); return 2;' }));
      if ((await ownerOf(client, 'ttl', parked.runId)) === victim) plain = parked.runId;
      else await client.abort('ttl', parked.runId);
    }
    expect(plain).toBeDefined();
    await victim.kill();
    await sleep(1500);
    // A late wait finds it expired (ended by the sweeper of the live worker, or by this wait).
    expect(await client.wait('ttl', safe.runId)).toMatchObject({ status: 'failed', error: endedRunError('ttl', safe.runId) });
    // Nobody waits on the other one: the sweeper ends it.
    const until = Date.now() + 5000;
    let types: string[] = [];
    while (Date.now() < until) {
      types = (await client.events('ttl', { limit: 1000 })).events.filter((e) => e.runId === plain).map((e) => e.type);
      if (types.includes('run.expired')) break;
      await sleep(200);
    }
    const events = (await client.events('ttl', { limit: 1000 })).events;
    const terminal = (runId: string) =>
      events.filter((e) => e.runId === runId && /^run\.(completed|failed|expired|lost)$/.test(e.type)).map((e) => e.type);
    expect(terminal(safe.runId)).toEqual(['run.expired']);
    expect(terminal(plain!)).toEqual(['run.expired']);
    await stack.addWorker();
  });
});
