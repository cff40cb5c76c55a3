import { randomInt } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { CodeModeClient } from '@codemode/client';
import type { CodeModeResult, ProcessInput, ShellExecInput } from '@codemode/contracts';
import { apiKeysOf, killHostPids, leaksIn, makeCanaries, tenancyEnv, type Canaries } from './tenancy-helpers';
import { TestStack } from '../utils/test-stack';

/**
 * SPEC §10, adversarially: the confinement suites put two tenants (alpha attacks, beta is the
 * bystander) on one deployment with bubblewrap confinement and small caps. Each test tries one
 * escape, asserts it fails with the SPEC's strings, and ends with `betaUnaffectedAndNothingLeaked()`:
 * beta's trivial cell and shell command still work and no answer of the test carried a canary or a
 * host path.
 */

export interface Answer {
  text: string;
  details: Record<string, unknown>;
}
/** What the in-cell `attempt` helper returns for one call. */
export interface Outcome {
  ok: boolean;
  value?: unknown;
  message?: string;
}
export type Tenant = 'alpha' | 'beta';

/** Numeric tag that makes this test file's `sleep` markers and probe file names unique on the host. */
export const TAG = String(randomInt(10_000, 99_999));
/** Files a command tries to create outside /workspace; removed after the file's tests in case one was. */
export const HOST_PROBE_FILES = ['/usr', '/etc', '', '/usr/bin'].map((dir) => `${dir}/probe-${TAG}`);
/** In-cell helper: runs a call, returns `{ok, value}` (optionally summarized) or `{ok:false, message}`. */
export const ATTEMPT = `const attempt = async (f, show) => {
  try { const v = await f(); return { ok: true, value: show ? show(v) : v }; }
  catch (e) { return { ok: false, message: String(e && e.message) }; }
};`;
export const escapes = (path: string) => ({ ok: false, message: `path escapes the workspace: ${path}` });
export const lines = (text: unknown) => String(text).split(/\r?\n/);

/**
 * Starts the two-tenant deployment for the enclosing describe (beta's secret written by beta's own
 * shell into its session `vault`), stops it afterwards and kills what this file's tests left running.
 * `env` overrides the suite's caps (`tenancyEnv`) for one file.
 */
export function confinementTenants(env: Record<string, string> = {}) {
  const canaries: Canaries = makeCanaries();
  let stack: TestStack;
  let clients: Record<Tenant, CodeModeClient>;
  /** Every answer of the current test, both tenants, for the leak check. */
  let seen: unknown[] = [];

  const sh = async (tenant: Tenant, sid: string, input: ShellExecInput): Promise<Answer> => {
    const answer = (await clients[tenant].shellExec(sid, input)) as Answer;
    seen.push(answer);
    return answer;
  };
  const proc = async (tenant: Tenant, sid: string, input: ProcessInput): Promise<Answer> => {
    const answer = (await clients[tenant].process(sid, input)) as Answer;
    seen.push(answer);
    return answer;
  };
  const cell = async (tenant: Tenant, sid: string, code: string, timeoutMs = 30_000): Promise<CodeModeResult> => {
    const result = await clients[tenant].exec(sid, { title: 'tenancy probe', code }, { signal: AbortSignal.timeout(timeoutMs) });
    seen.push(result);
    return result;
  };
  const completedValue = <T = Record<string, Outcome>>(result: CodeModeResult): T => {
    expect(result).toMatchObject({ status: 'completed' });
    return (result as { value: T }).value;
  };
  const betaProbe = async (): Promise<void> => {
    const [result, shell] = await Promise.all([cell('beta', 'beta-probe', 'return 1+1'), sh('beta', 'beta-probe', { command: 'echo ok' })]);
    expect(result).toMatchObject({ status: 'completed', value: 2 });
    expect(shell.details).toMatchObject({ status: 'completed', exitCode: 0, aggregated: 'ok' });
  };
  const betaUnaffectedAndNothingLeaked = async (): Promise<void> => {
    await betaProbe();
    expect(leaksIn(seen, canaries, stack)).toEqual([]);
  };

  beforeAll(async () => {
    stack = await TestStack.start({ apiKeys: apiKeysOf(canaries), env: { ...tenancyEnv(canaries), ...env } });
    clients = { alpha: stack.client(canaries.keyAlpha), beta: stack.client(canaries.keyBeta) };
    // Beta's secret, written by beta's own shell; the value travels in the call's env, never in a command line.
    const written = await clients.beta.shellExec('vault', {
      command: 'printf %s "$SECRET" > secret.txt',
      env: { SECRET: canaries.betaFile },
    });
    expect(written.details).toMatchObject({ status: 'completed', exitCode: 0 });
  });
  beforeEach(() => {
    seen = [];
  });
  afterAll(async () => {
    for (const marker of ['3001', '3002', '3003', '3004', '3005', '3006', '30', '20']) killHostPids(`sleep ${marker}.${TAG}`);
    for (const file of HOST_PROBE_FILES) rmSync(file, { force: true });
    await stack?.stop();
  });

  return {
    canaries,
    /** Set by the describe's beforeAll: read them inside tests. */
    get stack(): TestStack {
      return stack;
    },
    get clients(): Record<Tenant, CodeModeClient> {
      return clients;
    },
    /** Adds answers got outside `sh`/`proc`/`cell` to the current test's leak check. */
    remember: (...answers: unknown[]): void => {
      seen.push(...answers);
    },
    sh,
    proc,
    cell,
    completedValue,
    betaProbe,
    betaUnaffectedAndNothingLeaked,
  };
}
