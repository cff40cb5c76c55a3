import type { CodeModeClient } from '@codemode/client';
import type { CodeModeResult } from '@codemode/contracts';
import { TestStack } from '../utils/test-stack';
import { twoTenantProbe, victimHarm } from '../utils/two-tenant-probe';
import { apiKeysOf, makeCanaries, tenancyEnv } from './tenancy-helpers';

/**
 * SPEC §10 "Event loops", adversarially: alpha reads 64 MiB files of newlines and greps 16 MiB
 * ones, several cells at once, on a worker as CI runs it (bubblewrap, two tenants). The core file
 * tools work in bounded slices or off the main thread, so beta's trivial cells (and reads, the
 * two-tenant probe's rounds) keep completing promptly throughout, the worker's lease never lapses, and its event loop never stalls for long.
 */

jest.setTimeout(240_000);

const MIB = 1024 * 1024;
/** Beta's `return 1` (and session read) while alpha attacks: a stalled worker (one read used to hold it 5-18 s) fails
 * it with `no worker started the cell within its budget` or answers after seconds. Loose on purpose. */
const BETA_MAX_MS = 5_000;
/** Longest event-loop stall the worker may report over the attack (SPEC: 50 ms per call; this
 * allows for a loaded CI machine descheduling the process, but not for a read of a whole file). */
const WORKER_MAX_LAG_SECONDS = 1;

/** A value of the worker's Prometheus text (the first sample of `name`). */
function metric(text: string, name: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `) || candidate.startsWith(`${name}{`));
  if (!line) throw new Error(`metric ${name} missing`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('tenancy: core file tools over large files never stall the worker for another tenant (SPEC §10)', () => {
  const canaries = makeCanaries();
  let stack: TestStack;
  let alpha: CodeModeClient;
  let beta: CodeModeClient;

  beforeAll(async () => {
    stack = await TestStack.start({
      apiKeys: apiKeysOf(canaries),
      env: {
        ...tenancyEnv(canaries),
        // Room for the attack's files (the suite's other caps are tiny).
        CODEMODE_SHELL_MAX_FILE_BYTES: String(128 * MIB),
        CODEMODE_WORKSPACE_MAX_BYTES: String(512 * MIB),
        CODEMODE_SHELL_MAX_TIMEOUT_SECONDS: '60',
      },
    });
    alpha = stack.client(canaries.keyAlpha);
    beta = stack.client(canaries.keyBeta);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** Alpha's cell, waited on until it ends (a cell whose tool call outlasts its leg parks and
   * goes on, as SPEC §6 says). */
  const untilTerminal = async (sid: string, exec: { title: string; code: string }): Promise<CodeModeResult> => {
    let result = await alpha.exec(sid, exec, { signal: AbortSignal.timeout(120_000) });
    while (result.status === 'waiting') result = await alpha.wait(sid, result.runId, { signal: AbortSignal.timeout(120_000) });
    return result;
  };
  const workerMetrics = async (): Promise<string> => (await fetch(`${stack.workerUrl(stack.workers[0])}/metrics`)).text();

  it("alpha's reads of 64 MiB of newlines and greps over large files leave beta's cells prompt and the lease held", async () => {
    const made = (await alpha.shellExec('big', {
      command: `head -c ${64 * MIB} /dev/zero | tr '\\0' '\\n' > lines.txt && mkdir -p g && for i in 1 2 3 4; do head -c ${16 * MIB - 1} /dev/zero | tr '\\0' '\\n' > g/$i.txt; done && echo made`,
      timeoutSeconds: 60,
    })) as { details: Record<string, unknown> };
    expect(made.details).toMatchObject({ status: 'completed', aggregated: 'made' });
    const before = await workerMetrics();
    const lapsesBefore = metric(before, 'codemode_lease_lapses_total');

    // Four attacking cells at once, each reading the whole 64 MiB file and grepping the four 16 MiB ones twice.
    const { attack: results, victim } = await twoTenantProbe(stack, { client: beta, sessionId: 'probe' }, () =>
      Promise.all(
        [1, 2, 3, 4].map(() =>
          untilTerminal('big', {
            title: 'large file tools',
            code: `const out = [];
            for (let round = 0; round < 2; round += 1) {
              const r = await read({ path: 'lines.txt', offset: 60000000, limit: 3 });
              out.push(r.totalLines);
              try { out.push((await grep({ pattern: 'canary', path: 'g' })).matches.length); }
              catch (e) { out.push(String(e.message)); }
            }
            return out;`,
          }),
        ),
      ),
    );
    process.stdout.write(`beta under attack: ${JSON.stringify({ rounds: victim.rounds, read: victim.read, exec: victim.exec })}\n`);

    for (const result of results) {
      expect(result).toMatchObject({ status: 'completed' });
      const [lines, grep] = (result as { value: unknown[] }).value;
      expect(lines).toBe(64 * MIB);
      // Matching 16 M empty lines may spend grep's 1 s budget: then the SPEC's answer, never a stall.
      expect([0, 'pattern too expensive: canary']).toContain(grep);
    }
    expect(victimHarm(victim, { maxP99Ms: BETA_MAX_MS })).toEqual([]);
    // Every cell, not only the 99th percentile.
    expect(Math.max(victim.read.maxMs, victim.exec.maxMs)).toBeLessThan(BETA_MAX_MS);

    const after = await workerMetrics();
    expect(metric(after, 'codemode_lease_lapses_total')).toBe(lapsesBefore);
    // prom-client's max is over the time since the previous scrape (its histogram is reset on each): the attack.
    expect(metric(after, 'nodejs_eventloop_lag_max_seconds')).toBeLessThan(WORKER_MAX_LAG_SECONDS);
    expect(await fetch(`${stack.workerUrl(stack.workers[0])}/health/ready`).then((response) => response.status)).toBe(200);
  });
});
