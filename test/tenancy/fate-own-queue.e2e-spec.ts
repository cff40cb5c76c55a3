import { randomBytes } from 'node:crypto';
import type { CodeModeClient } from '@codemode/client';
import { nodeErrors, type CodeModeResult, type ShellAnswer } from '@codemode/contracts';
import { sleep } from './tenancy-helpers';
import { TestStack } from '../utils/test-stack';

jest.setTimeout(240_000);

/**
 * SPEC §10 "Fate isolation", the worker's own queue: bob, at his default quotas, sends 140 REST
 * shell calls that each wait ~30 s — `host: "node"` to a paired node that never answers, or
 * `process poll` with `timeout: 30000` on a silent session. Those calls are routed to the worker
 * that serves bob's shell scope, over the same queue that carries alice's `wait` on her parked
 * run and her own shell calls. Alice's `wait` and `shell/exec echo` answer in seconds and intact,
 * not after bob's waits (~27 s when the queue's consumer held them).
 */
const ATTACK_CALLS = 140;
/** Under bob's rate quota (50/s, burst 100): every attacking call is admitted by the API. */
const ATTACK_PER_SECOND = 40;
/** Alice's calls on a loaded 2-core machine: seconds, far from the ~27 s of waiting behind bob. */
const VICTIM_BOUND_MS = 8_000;
/** `CODEMODE_TENANT_MAX_SHELL_CALLS` default: bob's calls in flight on one worker at once. */
const SHELL_CALLS_PER_WORKER = 32;
const SHELL_CALL_QUOTA = 'shell call quota reached for this tenant; wait for its shell calls in flight to answer first.';

const run = randomBytes(4).toString('hex');
const keys = { alice: `oa-${run}`, bob: `ob-${run}`, bobAgent: `obg-${run}` };

let stack: TestStack;
let alice: CodeModeClient;
let bob: CodeModeClient;
let bobAgent: CodeModeClient;
const silentNode = new AbortController();

beforeAll(async () => {
  stack = await TestStack.start({ apiKeys: `${keys.alice}:alice,${keys.bob}:bob,${keys.bobAgent}:bob:agent` });
  alice = stack.client(keys.alice);
  bob = stack.client(keys.bob);
  bobAgent = stack.client(keys.bobAgent);
  await pairSilentNode();
});

afterAll(async () => {
  silentNode.abort();
  await stack?.stop();
});

/** Bob's node: pairs advertising `system.run`, reads its invocations and never answers one. */
async function pairSilentNode(): Promise<void> {
  let paired!: () => void;
  const isPaired = new Promise<void>((resolve) => (paired = resolve));
  void (async () => {
    for await (const message of bob.connectNode({ name: 'silent', platform: 'linux', commands: ['system.run'] }, silentNode.signal)) {
      if (message.event === 'paired') paired();
    }
  })().catch(() => undefined);
  await isPaired;
}

/** Alice's parked run (it resumes on the worker holding it, over that worker's own queue) and a warm shell scope. */
async function aliceReady(sid: string): Promise<string> {
  const parked = await alice.exec(sid, { title: 'parked', code: 'await yield_control(); return { resumed: "alice" };' });
  if (parked.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(parked)}`);
  // Her scope's home is now the worker: her next shell calls go over its own queue.
  expect(await alice.shellExec(sid, { command: 'echo warm' })).toMatchObject({ text: 'warm' });
  return parked.runId;
}

/** Sends `ATTACK_CALLS` of bob's calls under his rate quota; the answers come later. */
async function attack(send: () => Promise<ShellAnswer>): Promise<Promise<ShellAnswer>[]> {
  const answers: Promise<ShellAnswer>[] = [];
  for (let n = 0; n < ATTACK_CALLS; n += 1) {
    answers.push(send());
    await sleep(1000 / ATTACK_PER_SECOND);
  }
  // Every call has reached the worker and is waiting (each for ~30 s).
  await sleep(1000);
  return answers;
}

/** Alice's `wait` on her parked run and her `shell/exec echo`, at once, timed. */
async function victim(sid: string, runId: string): Promise<{ waited: CodeModeResult; echoed: ShellAnswer; ms: number[] }> {
  const timed = async <T>(call: Promise<T>): Promise<[T, number]> => {
    const started = Date.now();
    const value = await call;
    return [value, Date.now() - started];
  };
  const [[waited, waitMs], [echoed, echoMs]] = await Promise.all([
    timed(alice.wait(sid, runId)),
    timed(alice.shellExec(sid, { command: `echo alice-${sid}` })),
  ]);
  return { waited, echoed, ms: [waitMs, echoMs] };
}

function expectVictimIntact(sid: string, outcome: Awaited<ReturnType<typeof victim>>): void {
  process.stdout.write(`${sid}: alice's wait and shell/exec echo took ${JSON.stringify(outcome.ms)} ms\n`);
  expect(outcome.waited).toMatchObject({ status: 'completed', value: { resumed: 'alice' } });
  expect(outcome.echoed).toMatchObject({ text: `alice-${sid}`, details: { status: 'completed', exitCode: 0 } });
  expect(Math.max(...outcome.ms)).toBeLessThan(VICTIM_BOUND_MS);
}

/** Bob's answers: each his call's own outcome after its wait, or the per-worker shell-call quota at once. */
function expectAttackBounded(answers: ShellAnswer[], waited: (answer: ShellAnswer) => boolean): void {
  const refused = answers.filter((answer) => answer.text === SHELL_CALL_QUOTA);
  expect(refused.every((answer) => answer.details.status === 'failed')).toBe(true);
  expect(answers.filter((answer) => answer.text !== SHELL_CALL_QUOTA).every(waited)).toBe(true);
  expect(answers.length - refused.length).toBeLessThanOrEqual(SHELL_CALLS_PER_WORKER);
}

test('140 calls of bob to a node that never answers leave alice’s wait and shell call answering in seconds', async () => {
  const sid = 'node';
  const runId = await aliceReady(sid);
  // Bob's scope is served by the worker too, so his calls share its own queue with alice's.
  expect(await bobAgent.shellExec('attack-node', { command: 'echo warm' })).toMatchObject({ text: 'warm' });

  const answers = await attack(() =>
    bobAgent.shellExec('attack-node', { command: 'cat /etc/hostname', host: 'node', node: 'silent', yieldMs: 30_000 }),
  );
  const outcome = await victim(sid, runId);

  expectVictimIntact(sid, outcome);
  expectAttackBounded(await Promise.all(answers), (answer) => answer.text === nodeErrors.timedOut('silent', 'system.run', 30_000));
});

test('140 process polls of bob with timeout 30000 leave alice’s wait and shell call answering in seconds', async () => {
  const sid = 'poll';
  const runId = await aliceReady(sid);
  const silent = await bobAgent.shellExec('attack-poll', { command: 'sleep 90', background: true, timeoutSeconds: 90 });
  if (silent.details.status !== 'running') throw new Error(`expected a running session, got ${JSON.stringify(silent)}`);
  const sessionId = silent.details.sessionId;

  const answers = await attack(() => bobAgent.process('attack-poll', { action: 'poll', sessionId, timeout: 30_000 }));
  const outcome = await victim(sid, runId);

  expectVictimIntact(sid, outcome);
  expectAttackBounded(await Promise.all(answers), (answer) => answer.details.status === 'running');
  await bobAgent.process('attack-poll', { action: 'kill', sessionId });
});
