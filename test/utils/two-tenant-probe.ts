import type { CodeModeClient } from '@codemode/client';
import type { TestStack } from './test-stack';

/**
 * The standard two-tenant probe of SPEC §10 "Fate isolation" (the checklist every new route or job
 * kind passes is in docs/architecture.md, "Fate isolation"): runs an attack, made by one tenant at
 * its quotas, while the other tenant (the victim) does small work in a loop, and reports how the
 * victim fared, for the test to assert on.
 *
 *   const { attack, victim } = await twoTenantProbe(stack, { client: beta, sessionId: 'victim' }, async () => {
 *     // alpha at its quotas; whatever this resolves with comes back as `attack`
 *   });
 *   expect(victimHarm(victim, { maxP99Ms: 5000 })).toEqual([]);
 *
 * - A round is one small read (`GET /v1/sessions/{sessionId}`) then one `return 1` exec, both in
 *   the victim's session, then the caller's own `step` if given (the victim's use of the route under
 *   attack, e.g. a `wait` on its parked run), each bounded by `stepTimeoutMs` (a step that times out
 *   is a failure). Rounds follow each other `pauseMs` apart while the attack runs, and at least
 *   `minRounds` in all.
 * - The session is created (one `return 1`, not counted) before the attack starts.
 * - A rejected attack is rethrown once the victim's last round ended.
 * - Latencies are per step kind (`read`, `exec`), in ms; `failures` says what each failed step got.
 *   A caller's `step` times what it needs itself (its bound may be on part of it).
 */
export interface Victim {
  readonly client: CodeModeClient;
  readonly sessionId: string;
}

export interface ProbeOptions {
  /** Between the victim's rounds (default 25 ms). */
  pauseMs?: number;
  /** The fewest rounds, however soon the attack ends (default 3). */
  minRounds?: number;
  /** Longest a step may take before it counts as failed (default 30 s). */
  stepTimeoutMs?: number;
  /** A third step of each round, after the exec. */
  step?: VictimStep;
}

export interface VictimStep {
  /** Prefixes the step's failures, e.g. `wait and echo: …`. */
  readonly name: string;
  /** Answers undefined when the victim got what it expected, else what it got. */
  readonly run: (signal: AbortSignal) => Promise<string | undefined>;
}

export interface Latencies {
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface VictimReport {
  readonly rounds: number;
  /** Steps (reads, execs and the caller's steps) that got their expected answer. */
  readonly successes: number;
  /** One line per step that did not, e.g. `exec: {"status":"failed",…}` or `read: HTTP 503`. */
  readonly failures: readonly string[];
  readonly read: Latencies;
  readonly exec: Latencies;
  /** Whether the stack's API process was still running after the attack. */
  readonly apiAlive: boolean;
}

export async function twoTenantProbe<T>(
  stack: TestStack,
  victim: Victim,
  attack: () => Promise<T>,
  options: ProbeOptions = {},
): Promise<{ attack: T; victim: VictimReport }> {
  const { pauseMs = 25, minRounds = 3, stepTimeoutMs = 30_000, step } = options;
  const warm = await victim.client.exec(victim.sessionId, { title: 'probe warm-up', code: 'return 1' });
  if (warm.status !== 'completed') throw new Error(`the victim's session could not be set up: ${JSON.stringify(warm)}`);

  const reads: number[] = [];
  const execs: number[] = [];
  const failures: string[] = [];
  let rounds = 0;
  let attackDone = false;
  const attacked = attack().finally(() => (attackDone = true));
  // Settled here so a rejection waits for the victim's last round instead of going unhandled.
  const outcome = attacked.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  while (!attackDone || rounds < minRounds) {
    const read = await timedStep(stepTimeoutMs, async (signal) => {
      const answer = await victim.client.raw('GET', `/v1/sessions/${encodeURIComponent(victim.sessionId)}`, { signal });
      return answer.status === 200 ? undefined : `HTTP ${answer.status} ${answer.text.slice(0, 200)}`;
    });
    reads.push(read.ms);
    if (read.failure !== undefined) failures.push(`read: ${read.failure}`);
    const exec = await timedStep(stepTimeoutMs, async (signal) => {
      const result = await victim.client.exec(victim.sessionId, { title: 'probe', code: 'return 1' }, { signal });
      return result.status === 'completed' && result.value === 1 ? undefined : JSON.stringify(result).slice(0, 300);
    });
    execs.push(exec.ms);
    if (exec.failure !== undefined) failures.push(`exec: ${exec.failure}`);
    if (step !== undefined) {
      const own = await timedStep(stepTimeoutMs, step.run);
      if (own.failure !== undefined) failures.push(`${step.name}: ${own.failure}`);
    }
    rounds += 1;
    if (!attackDone || rounds < minRounds) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  const settled = await outcome;
  if (!settled.ok) throw settled.error;
  const report: VictimReport = {
    rounds,
    successes: rounds * (step === undefined ? 2 : 3) - failures.length,
    failures,
    read: latencies(reads),
    exec: latencies(execs),
    apiAlive: stack.api.alive,
  };
  return { attack: settled.value, victim: report };
}

/**
 * What went wrong for the victim, as lines (none when it was served: every step answered as
 * expected, both p99s under `maxP99Ms`, the API up). `expect(victimHarm(victim, bounds)).toEqual([])`
 * fails with the lines and the numbers in them.
 */
export function victimHarm(report: VictimReport, bounds: { maxP99Ms: number }): string[] {
  const harm = [...report.failures];
  if (report.rounds === 0) harm.push('the victim ran no round');
  if (!report.apiAlive) harm.push('the API process died');
  for (const kind of ['read', 'exec'] as const) {
    const { p50Ms, p99Ms, maxMs } = report[kind];
    if (p99Ms >= bounds.maxP99Ms) harm.push(`${kind} p99 ${p99Ms} ms (p50 ${p50Ms}, max ${maxMs}) not under ${bounds.maxP99Ms} ms`);
  }
  return harm;
}

async function timedStep(
  timeoutMs: number,
  step: (signal: AbortSignal) => Promise<string | undefined>,
): Promise<{ ms: number; failure?: string }> {
  const t0 = performance.now();
  let failure: string | undefined;
  try {
    failure = await step(AbortSignal.timeout(timeoutMs));
  } catch (error) {
    failure = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
  return { ms: performance.now() - t0, ...(failure === undefined ? {} : { failure }) };
}

function latencies(values: readonly number[]): Latencies {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0);
  return { count: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: Math.round(sorted.at(-1) ?? 0) };
}
