import { randomBytes } from 'node:crypto';
import type { CodeModeClient } from '@codemode/client';
import { cellQueueShard, type CodeModeResult } from '@codemode/contracts';
import { cellsLeft } from '../utils/cell-backlog';
import { stackRedis, TestStack } from '../utils/test-stack';

jest.setTimeout(180_000);

/**
 * SPEC §10 "Fate isolation", cell slots: the attacker (bob, default quotas) holds more waiting
 * cells than a worker has cell slots (2 threads: 16), of every waiting shape — awaitResults on a
 * timer, awaitResults on `agents.run`, a call held for an approval, a long budget on a timer, and
 * awaitResults on a timer far past a 500 ms budget —
 * spread over every shard of the cell queue. Waiting cells give their slot back, so the other
 * tenant's (alice's) `return 1` cells all complete, in time, with their values; bob's cells
 * complete too once their waits end, and no cell job is left active.
 */
const SHARDS = 16;
const HOLD_MS = 20_000;
/** The four shapes of the issue, and an `awaitResults` cell whose wait outlasts many of its budgets. */
const SHAPES = ['awaitTimer', 'awaitAgents', 'approval', 'longTimer', 'awaitShortBudget'] as const;
type Shape = (typeof SHAPES)[number];
/** 24 waiting cells, about five of each shape, every shard holding at least one. */
const BOB_CELLS = 24;
/** Alice's budget: a cell no worker starts within it fails `no worker started the cell within its budget`. */
const ALICE_BUDGET_MS = 5000;
const ALICE_CELLS = 12;
/** A `return 1` on a loaded 2-core machine, with a worker full of another tenant's waiting cells. */
const ALICE_BOUND_MS = 4000;

const SLEEP = `await new Promise((resolve) => setTimeout(resolve, ${HOLD_MS})); return "slept"`;
const CELLS: Record<Shape, { code: string; awaitResults?: boolean }> = {
  awaitTimer: { code: SLEEP, awaitResults: true },
  awaitAgents: { code: 'return await agents.run({ task: "hold" })', awaitResults: true },
  approval: { code: 'const r = await ls({}); return Array.isArray(r.entries)' },
  longTimer: { code: SLEEP },
  awaitShortBudget: { code: SLEEP, awaitResults: true },
};
const SESSIONS: Record<Shape, object> = {
  awaitTimer: {},
  awaitAgents: { agents: true },
  approval: { policy: { rules: [{ tool: 'ls', decision: 'approve' }] } },
  longTimer: { codeMode: { timeoutMs: 60_000 } },
  awaitShortBudget: { codeMode: { timeoutMs: 500 } },
};

const run = randomBytes(4).toString('hex');
const keys = { alice: `sa-${run}`, bob: `sb-${run}` };

let stack: TestStack;
let alice: CodeModeClient;
let bob: CodeModeClient;

beforeAll(async () => {
  stack = await TestStack.start({ apiKeys: `${keys.alice}:alice,${keys.bob}:bob` });
  alice = stack.client(keys.alice);
  bob = stack.client(keys.bob);
});

afterAll(async () => {
  await stack?.stop();
});

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A session id of `tenant` whose cells go to `shard` (the API shards by tenant and session). */
function sessionOnShard(tenant: string, stem: string, shard: number): string {
  for (let n = 0; ; n += 1) if (cellQueueShard(tenant, `${stem}-${n}`, SHARDS) === shard) return `${stem}-${n}`;
}

/** The one run of a session, once the API has recorded it running. */
async function runningRun(client: CodeModeClient, sid: string): Promise<string> {
  for (let i = 0; i < 400; i += 1) {
    const [summary] = (await client.listRuns(sid)).runs;
    if (summary?.status === 'running') return summary.runId;
    await tick(50);
  }
  throw new Error(`no run of ${sid} is running`);
}

test("a tenant's waiting cells of every shape, over every shard, take no cell slot another tenant's cells need", async () => {
  const cells = Array.from({ length: BOB_CELLS }, (_, n) => {
    const shape = SHAPES[n % SHAPES.length];
    return { shape, sid: sessionOnShard('bob', `${shape}-${n}`, n % SHARDS) };
  });
  for (const { shape, sid } of cells) await bob.putSession(sid, SESSIONS[shape]);
  const exec = ({ shape, sid }: (typeof cells)[number]) => bob.exec(sid, { title: shape, ...CELLS[shape] });
  // The short-budget cells go once the others gave their slots back: sent with them, bob's own
  // cells could find no slot within 500 ms.
  const short = (shape: Shape) => shape === 'awaitShortBudget';
  const bobAnswers = new Map<number, Promise<CodeModeResult>>();
  cells.forEach((cell, n) => !short(cell.shape) && bobAnswers.set(n, exec(cell)));
  await Promise.all(cells.filter((cell) => !short(cell.shape)).map(({ sid }) => runningRun(bob, sid)));
  await tick(2000);
  cells.forEach((cell, n) => short(cell.shape) && bobAnswers.set(n, exec(cell)));
  // Every one of bob's cells runs on the worker and waits (its exec in flight).
  const runIds = await Promise.all(cells.map(({ sid }) => runningRun(bob, sid)));
  await tick(1000);

  const aliceSessions = Array.from({ length: ALICE_CELLS }, (_, n) => sessionOnShard('alice', `a-${n}`, n % SHARDS));
  for (const sid of aliceSessions) await alice.putSession(sid, { codeMode: { timeoutMs: ALICE_BUDGET_MS } });
  const aliceMs: number[] = [];
  const aliceResults = await Promise.all(
    aliceSessions.map(async (sid, n) => {
      const sent = Date.now();
      const result = await alice.exec(sid, { title: `one ${n}`, code: `return ${n} + 1` });
      aliceMs[n] = Date.now() - sent;
      return result;
    }),
  );
  process.stdout.write(`alice's cells beside ${BOB_CELLS} waiting cells of bob, ms: ${JSON.stringify(aliceMs)}\n`);
  expect(aliceResults).toEqual(aliceSessions.map((_, n) => expect.objectContaining({ status: 'completed', value: n + 1 })));
  expect(Math.max(...aliceMs)).toBeLessThan(ALICE_BOUND_MS);

  // Bob's cells go on: the operator approves, the platform answers agents.run, the timers fire.
  for (const [n, { shape, sid }] of cells.entries()) {
    if (shape === 'approval') {
      const listed = await bob.raw('GET', `/v1/sessions/${sid}/approvals`);
      const [approval] = (listed.body as { approvals: { approvalId: string }[] }).approvals;
      const decided = await bob.raw('POST', `/v1/sessions/${sid}/approvals/${approval.approvalId}`, {
        body: JSON.stringify({ decision: 'approve' }),
        headers: { 'content-type': 'application/json' },
      });
      expect(decided.status).toBe(200);
    }
    if (shape === 'awaitAgents') await bob.toolResults(sid, runIds[n], [{ id: 'bridge:callValue:1', ok: true, value: `agent ${n}` }]);
  }
  const expected: Record<Shape, (n: number) => unknown> = {
    awaitTimer: () => 'slept',
    awaitAgents: (n) => `agent ${n}`,
    approval: () => true,
    longTimer: () => 'slept',
    awaitShortBudget: () => 'slept',
  };
  expect(await Promise.all(cells.map((_, n) => bobAnswers.get(n)!))).toEqual(
    cells.map(({ shape }, n) => expect.objectContaining({ status: 'completed', value: expected[shape](n) })),
  );
  // Every cell job or entry was finished, those that gave their slot back included.
  const redis = stackRedis();
  try {
    expect(await cellsLeft(redis, stack.prefix, SHARDS)).toBe(0);
  } finally {
    redis.disconnect();
  }
  expect(stack.workers[0].logs()).not.toContain('detached job');
});
