import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CodeModeClient } from '@codemode/client';
import type { CodeModeResult } from '@codemode/contracts';
import { TestStack } from '../utils/test-stack';

/**
 * SPEC §10 "Ceilings": every §8 limit of a session, and every deployment default, is clamped to
 * min(rule maximum, the tenant's ceiling); the shell timeout to CODEMODE_SHELL_MAX_TIMEOUT_SECONDS.
 * The session answers show the clamped values and cells really run under them. Beta's ceilings
 * come from CODEMODE_TENANTS_FILE, alpha has the deployment's.
 */

jest.setTimeout(60_000);

const MiB = 1_048_576;
const CEILINGS = { memoryLimitBytes: 16 * MiB, maxSnapshotBytes: 2 * MiB, snapshotTtlSeconds: 60, timeoutMs: 1000 };
const BETA_CEILINGS = { memoryLimitBytes: 48 * MiB, timeoutMs: 4000 };
const SHELL_CAP_SECONDS = 2;
/** Everything a session may ask for, at the rule maxima (SPEC §8). */
const ASK_MAX = { memoryLimitBytes: 1024 * MiB, maxSnapshotBytes: 256 * MiB, snapshotTtlSeconds: 86_400, timeoutMs: 60_000 };
/** Busy for 2.5 s: past alpha's clamped timeout, within beta's. */
const SPIN = 'const t = Date.now(); while (Date.now() - t < 2500) {} return "done";';
/** Holds a 24 MiB string: over alpha's 16 MiB memory ceiling, under beta's 48 MiB. */
const ALLOCATE = 'const s = "x".repeat(24 * 1024 * 1024); return s.length;';

describe('tenancy: ceilings clamp session limits and deployment defaults (SPEC §10)', () => {
  let stack: TestStack;
  let dir: string;
  let alpha: CodeModeClient;
  let beta: CodeModeClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cm-ceilings-'));
    const tenantsFile = join(dir, 'tenants.json');
    writeFileSync(tenantsFile, JSON.stringify({ beta: { ceilings: BETA_CEILINGS } }));
    stack = await TestStack.start({
      apiKeys: 'k1:alpha,k2:beta',
      env: {
        CODEMODE_CEILING_MEMORY_LIMIT_BYTES: String(CEILINGS.memoryLimitBytes),
        CODEMODE_CEILING_MAX_SNAPSHOT_BYTES: String(CEILINGS.maxSnapshotBytes),
        CODEMODE_CEILING_SNAPSHOT_TTL_SECONDS: String(CEILINGS.snapshotTtlSeconds),
        CODEMODE_CEILING_TIMEOUT_MS: String(CEILINGS.timeoutMs),
        CODEMODE_TENANTS_FILE: tenantsFile,
        // Deployment defaults over the ceilings (timeoutMs and snapshotTtlSeconds keep their
        // SPEC defaults, 10000 and 900, which are over them too).
        CODEMODE_MEMORY_LIMIT_BYTES: String(512 * MiB),
        CODEMODE_MAX_SNAPSHOT_BYTES: String(64 * MiB),
        CODEMODE_SHELL_MAX_TIMEOUT_SECONDS: String(SHELL_CAP_SECONDS),
        CODEMODE_SHELL_SANDBOX: 'bwrap',
      },
    });
    alpha = stack.client('k1');
    beta = stack.client('k2');
  });

  afterAll(async () => {
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const exec = (client: CodeModeClient, sid: string, code: string): Promise<CodeModeResult> => client.exec(sid, { title: 'ceiling', code });

  it('answers a PUT asking more than the ceiling with the ceiling, in the PUT and in GET', async () => {
    const put = await alpha.putSession('s-ask', { codeMode: ASK_MAX });
    expect(put.codeMode).toMatchObject(CEILINGS);
    expect((await alpha.getSession('s-ask')).codeMode).toMatchObject(CEILINGS);
    // Below the ceiling a value is kept as asked.
    const lower = await alpha.putSession('s-ask', { codeMode: { memoryLimitBytes: 8 * MiB, timeoutMs: 500 } });
    expect(lower.codeMode).toMatchObject({ memoryLimitBytes: 8 * MiB, timeoutMs: 500, snapshotTtlSeconds: 60 });
  });

  it("applies the tenants file's ceilings to beta, the deployment's to the names it does not list", async () => {
    const put = await beta.putSession('s-ask', { codeMode: ASK_MAX });
    expect(put.codeMode).toMatchObject({ ...CEILINGS, ...BETA_CEILINGS });
    expect((await beta.getSession('s-ask')).codeMode).toMatchObject({ ...CEILINGS, ...BETA_CEILINGS });
  });

  it('clamps the deployment defaults over the ceilings', async () => {
    const fresh = await alpha.putSession('s-defaults', {});
    expect(fresh.codeMode).toMatchObject(CEILINGS);
    expect((await beta.putSession('s-defaults', {})).codeMode).toMatchObject({ ...CEILINGS, ...BETA_CEILINGS });
  });

  it('runs cells with the clamped memory limit', async () => {
    await alpha.putSession('s-memory', { codeMode: { memoryLimitBytes: 1024 * MiB, timeoutMs: 1000 } });
    const result = await exec(alpha, 's-memory', ALLOCATE);
    expect(result).toMatchObject({ status: 'failed' });
    expect(result.status === 'failed' && result.error).toMatch(/out of memory|memory/i);
    expect(await exec(alpha, 's-memory', 'return "x".repeat(1024 * 1024).length')).toMatchObject({ status: 'completed', value: MiB });

    await beta.putSession('s-memory', { codeMode: { memoryLimitBytes: 1024 * MiB } });
    expect(await exec(beta, 's-memory', ALLOCATE)).toMatchObject({ status: 'completed', value: 24 * MiB });
  });

  it('runs cells with the clamped timeout', async () => {
    await alpha.putSession('s-timeout', { codeMode: { timeoutMs: 60_000 } });
    const started = Date.now();
    expect(await exec(alpha, 's-timeout', SPIN)).toMatchObject({ status: 'failed', code: 'timeout', error: 'code mode timeout exceeded' });
    expect(Date.now() - started).toBeLessThan(2500);

    await beta.putSession('s-timeout', { codeMode: { timeoutMs: 60_000 } });
    expect(await exec(beta, 's-timeout', SPIN)).toMatchObject({ status: 'completed', value: 'done' });
  });

  it('parks runs with the clamped snapshot TTL and refuses snapshots over the clamped size', async () => {
    await alpha.putSession('s-park', { codeMode: ASK_MAX });
    const parked = await exec(alpha, 's-park', 'await yield_control(); return 1;');
    expect(parked.status).toBe('waiting');
    const runId = parked.status === 'waiting' ? parked.runId : '';
    const run = await alpha.getRun('s-park', runId);
    const ttlMs = Date.parse(run.expiresAt!) - Date.parse(run.parkedAt ?? run.updatedAt);
    expect(ttlMs).toBeGreaterThan(0);
    expect(ttlMs).toBeLessThanOrEqual(CEILINGS.snapshotTtlSeconds * 1000 + 1000);
    await alpha.abort('s-park', runId);

    // The limit counts the compressed image (SPEC §12): random doubles do not compress, 3.2 MB of them stay over 2 MiB.
    const big = await exec(
      alpha,
      's-park',
      'const a = new Float64Array(400000); for (let i = 0; i < a.length; i++) a[i] = Math.random(); await yield_control(); return a.length;',
    );
    expect(big).toMatchObject({ status: 'failed', code: 'snapshot_limit_exceeded' });
  });

  it('caps the shell timeoutSeconds setting by CODEMODE_SHELL_MAX_TIMEOUT_SECONDS; 0 stays "the cap"', async () => {
    expect((await alpha.putSession('s-shell', { shell: { timeoutSeconds: 3600 } })).shell.timeoutSeconds).toBe(SHELL_CAP_SECONDS);
    expect((await alpha.getSession('s-shell')).shell.timeoutSeconds).toBe(SHELL_CAP_SECONDS);
    expect((await alpha.putSession('s-shell', { shell: { timeoutSeconds: 0 } })).shell.timeoutSeconds).toBe(0);
    expect((await alpha.putSession('s-shell', { shell: { timeoutSeconds: 1 } })).shell.timeoutSeconds).toBe(1);
    await alpha.putSession('s-shell', { shell: { timeoutSeconds: 3600 } });
    const started = Date.now();
    const answer = await alpha.shellExec('s-shell', { command: 'sleep 30', yieldMs: 10_000 });
    expect(Date.now() - started).toBeLessThan(8000);
    expect(answer.details).toMatchObject({ status: 'failed', timedOut: true });
    expect(answer.text).toContain(`Command timed out after ${SHELL_CAP_SECONDS} seconds.`);
  });
});
