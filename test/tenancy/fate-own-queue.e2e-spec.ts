import { randomBytes } from 'node:crypto';
import type { CodeModeClient } from '@codemode/client';
import { nodeErrors, type CodeModeResult, type ShellAnswer } from '@codemode/contracts';
import { sleep } from './tenancy-helpers';
import { TestStack } from '../utils/test-stack';
import { twoTenantProbe, victimHarm } from '../utils/two-tenant-probe';

jest.setTimeout(240_000);

/**
 * SPEC §10 "Fate isolation", the worker's own queue: bob, at his default quotas, sends 140 REST
 * shell calls that each wait ~30 s — `host: "node"` to a paired node that never answers, or
 * `process poll` with `timeout: 30000` on a silent session. Those calls are routed to the worker
 * that serves bob's shell scope, over the same queue that carries alice's `wait` on her parked
 * run and her own shell calls. Alice runs the two-tenant probe meanwhile, its step a `wait` on a
 * parked run with a `shell/exec echo` beside it: they answer in seconds and intact, not after bob's
 * waits (~27 s when the queue's consumer held them), and her reads and cells keep their bound.
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

const PARKED_CODE = 'await yield_control(); return { resumed: "alice" };';

/** Alice's parked run (it resumes on the worker holding it, over that worker's own queue) and a warm shell scope. */
async function aliceReady(sid: string): Promise<string> {
  const parked = await alice.exec(sid, { title: 'parked', code: PARKED_CODE });
  if (parked.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(parked)}`);
  // Her scope's home is now the worker: her next shell calls go over its own queue.
  expect(await alice.shellExec(sid, { command: 'echo warm' })).toMatchObject({ text: 'warm' });
  return parked.runId;
}

/**
 * Sends `ATTACK_CALLS` of bob's calls under his rate quota, then waits for their answers (each
 * after ~30 s of waiting on the worker, or the shell-call quota at once).
 */
async function attack(send: () => Promise<ShellAnswer>): Promise<ShellAnswer[]> {
  const answers: Promise<ShellAnswer>[] = [];
  for (let n = 0; n < ATTACK_CALLS; n += 1) {
    answers.push(send());
    await sleep(1000 / ATTACK_PER_SECOND);
  }
  return Promise.all(answers);
}

interface VictimOutcome {
  waited: CodeModeResult;
  echoed: ShellAnswer;
  ms: number[];
}

/** Alice's `wait` on her parked run and her `shell/exec echo`, at once, timed. */
async function waitAndEcho(sid: string, runId: string, signal: AbortSignal): Promise<VictimOutcome> {
  const timed = async <T>(call: Promise<T>): Promise<[T, number]> => {
    const started = Date.now();
    const value = await call;
    return [value, Date.now() - started];
  };
  const [[waited, waitMs], [echoed, echoMs]] = await Promise.all([
    timed(alice.wait(sid, runId, { signal })),
    timed(alice.shellExec(sid, { command: `echo alice-${sid}` }, { signal })),
  ]);
  return { waited, echoed, ms: [waitMs, echoMs] };
}

/**
 * Runs bob's `send`s under the two-tenant probe, whose step is alice's `wait` on a parked run (the
 * one `aliceReady` parked, then one parked anew each round) beside her `shell/exec echo`; asserts
 * every one of them intact and in time, and her reads and cells within the same bound.
 */
async function underAttack(sid: string, send: () => Promise<ShellAnswer>): Promise<ShellAnswer[]> {
  let runId: string | undefined = await aliceReady(sid);
  const outcomes: VictimOutcome[] = [];
  const { attack: answers, victim } = await twoTenantProbe(stack, { client: alice, sessionId: sid }, () => attack(send), {
    pauseMs: 250,
    step: {
      name: 'wait and echo',
      run: async (signal) => {
        if (runId === undefined) {
          const parked = await alice.exec(sid, { title: 'parked', code: PARKED_CODE }, { signal });
          if (parked.status !== 'waiting') return `parking: ${JSON.stringify(parked)}`;
          runId = parked.runId;
        }
        outcomes.push(await waitAndEcho(sid, runId, signal));
        runId = undefined;
        return undefined;
      },
    },
  });
  process.stdout.write(
    `${sid}: alice's wait and shell/exec echo took ${JSON.stringify(outcomes.map((outcome) => outcome.ms))} ms; ${JSON.stringify({
      rounds: victim.rounds,
      read: victim.read,
      exec: victim.exec,
    })}\n`,
  );
  expect(victimHarm(victim, { maxP99Ms: VICTIM_BOUND_MS })).toEqual([]);
  expect(outcomes.length).toBeGreaterThan(0);
  for (const outcome of outcomes) {
    expect(outcome.waited).toMatchObject({ status: 'completed', value: { resumed: 'alice' } });
    expect(outcome.echoed).toMatchObject({ text: `alice-${sid}`, details: { status: 'completed', exitCode: 0 } });
    expect(Math.max(...outcome.ms)).toBeLessThan(VICTIM_BOUND_MS);
  }
  return answers;
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
  // Bob's scope is served by the worker too, so his calls share its own queue with alice's.
  expect(await bobAgent.shellExec('attack-node', { command: 'echo warm' })).toMatchObject({ text: 'warm' });

  const answers = await underAttack(sid, () =>
    bobAgent.shellExec('attack-node', { command: 'cat /etc/hostname', host: 'node', node: 'silent', yieldMs: 30_000 }),
  );

  expectAttackBounded(answers, (answer) => answer.text === nodeErrors.timedOut('silent', 'system.run', 30_000));
});

test('140 process polls of bob with timeout 30000 leave alice’s wait and shell call answering in seconds', async () => {
  const sid = 'poll';
  const silent = await bobAgent.shellExec('attack-poll', { command: 'sleep 90', background: true, timeoutSeconds: 90 });
  if (silent.details.status !== 'running') throw new Error(`expected a running session, got ${JSON.stringify(silent)}`);
  const sessionId = silent.details.sessionId;

  const answers = await underAttack(sid, () => bobAgent.process('attack-poll', { action: 'poll', sessionId, timeout: 30_000 }));

  expectAttackBounded(answers, (answer) => answer.details.status === 'running');
  await bobAgent.process('attack-poll', { action: 'kill', sessionId });
});
