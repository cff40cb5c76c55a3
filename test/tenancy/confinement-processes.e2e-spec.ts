import type { ShellExecInput } from '@codemode/contracts';
import { type Answer, ATTEMPT, confinementTenants, escapes, lines, TAG } from './confinement-tenants';
import {
  apiKeysOf,
  eventually,
  hostPidsWith,
  KeylessWorkerStack,
  killHostPids,
  leaksIn,
  makeCanaries,
  removeHostFiles,
  serviceVariablesIn,
  sleep,
  tenancyEnv,
  type Canaries,
} from './tenancy-helpers';

/**
 * SPEC §10, adversarially (setup and leak check in test/tenancy/confinement-tenants.ts): each shell
 * command's limits hold and end only that command, every process of a sandbox ends with it, and a
 * worker without the keys still confines (or, unable to, is not ready).
 */

jest.setTimeout(60_000);

const MAX_FILE_BYTES = 1_048_576;
const WORKSPACE_MAX_BYTES = 8_388_608;

describe('tenancy: two tenants cannot escape their confinement (SPEC §10)', () => {
  const tenants = confinementTenants();
  const { sh, proc, betaProbe, betaUnaffectedAndNothingLeaked } = tenants;

  /** Polls a background session until it is no longer running (at most `ms`). */
  const untilEnded = async (sid: string, id: string, ms: number): Promise<Answer> => {
    const until = Date.now() + ms;
    let poll = await proc('alpha', sid, { action: 'poll', sessionId: id });
    while (poll.details.status === 'running' && Date.now() < until) {
      await sleep(200);
      poll = await proc('alpha', sid, { action: 'poll', sessionId: id });
    }
    return poll;
  };

  describe('Shell confinement: limits per command', () => {
    it('a file over CODEMODE_SHELL_MAX_FILE_BYTES fails and stays at most the cap', async () => {
      const answer = await sh('alpha', 'lim', { command: 'head -c 2000000 /dev/zero > big.bin; echo "rc=$?"; stat -c %s big.bin' });
      const out = lines(answer.details.aggregated);
      const rc = Number(/^rc=(\d+)$/m.exec(String(answer.details.aggregated))?.[1]);
      expect(rc).toBeGreaterThan(0);
      expect(Number(out[out.length - 1])).toBeLessThanOrEqual(MAX_FILE_BYTES);
      await betaUnaffectedAndNothingLeaked();
    });

    it('allocating more than CODEMODE_SHELL_MEMORY_BYTES fails inside that command only', async () => {
      const answer = await sh('alpha', 'lim', { command: `perl -e '$x = "a" x 300000000; print length($x), "\\n"'; echo "rc=$?"` });
      const rc = Number(/rc=(\d+)/.exec(String(answer.details.aggregated))?.[1]);
      expect(rc).toBeGreaterThan(0);
      expect(String(answer.details.aggregated)).not.toContain('300000000');
      expect((await sh('alpha', 'lim', { command: 'echo after' })).details).toMatchObject({ status: 'completed', aggregated: 'after' });
      await betaUnaffectedAndNothingLeaked();
    });

    it('/tmp is a fresh tmpfs of at most 64 MiB and open files are capped at 1024', async () => {
      const answer = await sh('alpha', 'lim', {
        command: "ulimit -n; stat -f -c %T /tmp; df -k --output=size /tmp | tail -n 1 | tr -d ' '; ls -A /tmp | wc -l",
      });
      const [nofile, fsType, sizeKb, tmpEntries] = lines(answer.details.aggregated);
      expect(nofile).toBe('1024');
      expect(fsType).toBe('tmpfs');
      expect(Number(sizeKb)).toBeGreaterThan(0);
      expect(Number(sizeKb)).toBeLessThanOrEqual(64 * 1024);
      expect(tmpEntries).toBe('0');
      await betaUnaffectedAndNothingLeaked();
    });

    it('a workspace over CODEMODE_WORKSPACE_MAX_BYTES makes the next shell call fail until files are removed', async () => {
      const prefix = `quota-${TAG}-`;
      let removed = 0;
      try {
        await sh('alpha', 'quota', {
          command: `for i in 1 2 3 4 5 6 7 8 9; do head -c 1000000 /dev/zero > ${prefix}$i; done; echo filled`,
        });
        const refused = await sh('alpha', 'quota', { command: 'echo next' });
        expect(refused).toMatchObject({
          text: `workspace over its size limit (${WORKSPACE_MAX_BYTES} bytes); remove files first.`,
          details: { status: 'failed' },
        });
        expect((await sh('alpha', 'quota', { command: 'echo still' })).text).toBe(
          `workspace over its size limit (${WORKSPACE_MAX_BYTES} bytes); remove files first.`,
        );
        // Only that session is held: alpha's other session and beta keep working.
        expect((await sh('alpha', 'quota-other', { command: 'echo fine' })).details).toMatchObject({
          status: 'completed',
          aggregated: 'fine',
        });
        await betaProbe();
      } finally {
        removed = removeHostFiles(tenants.stack.workspaceRoot, prefix);
      }
      expect(removed).toBe(9);
      expect((await sh('alpha', 'quota', { command: 'echo back' })).details).toMatchObject({ status: 'completed', aggregated: 'back' });
      await betaUnaffectedAndNothingLeaked();
    });
  });

  describe('Shell confinement: processes', () => {
    /** Starts a background session that leaves a setsid'd and a double-forked nohup'd sleep behind. */
    const startEscapers = async (sid: string, a: string, b: string, extra: Partial<ShellExecInput> = {}): Promise<string> => {
      const started = await sh('alpha', sid, {
        command: `(setsid sleep ${a}.${TAG} >/dev/null 2>&1 &); (nohup sleep ${b}.${TAG} >/dev/null 2>&1 &); sleep 30`,
        background: true,
        ...extra,
      });
      expect(started.details.status).toBe('running');
      // The escaped sleeps themselves are running (not just the shell whose command line names them).
      const both = () =>
        hostPidsWith(`sleep ${a}.${TAG}`, { exact: true }).length > 0 && hostPidsWith(`sleep ${b}.${TAG}`, { exact: true }).length > 0;
      expect(await eventually(both, 2000)).toBe(true);
      return String(started.details.sessionId);
    };
    const noneLeft = (a: string, b: string) => () =>
      hostPidsWith(`sleep ${a}.${TAG}`).length === 0 && hostPidsWith(`sleep ${b}.${TAG}`).length === 0;

    it('process kill ends every process of the sandbox, setsid and double-forked ones included', async () => {
      try {
        const id = await startEscapers('procs-kill', '3001', '3002');
        expect((await proc('alpha', 'procs-kill', { action: 'kill', sessionId: id })).text).toBe(
          `Termination requested for session ${id}.`,
        );
        // Well before the 3 s cap would end them anyway.
        expect(await eventually(noneLeft('3001', '3002'), 2000)).toBe(true);
      } finally {
        killHostPids(`sleep 3001.${TAG}`);
        killHostPids(`sleep 3002.${TAG}`);
      }
      await betaUnaffectedAndNothingLeaked();
    });

    it('timeoutSeconds expiry ends every process of the sandbox, setsid and double-forked ones included', async () => {
      try {
        const id = await startEscapers('procs-timeout', '3003', '3004', { timeoutSeconds: 1 });
        expect(await eventually(noneLeft('3003', '3004'), 3500)).toBe(true);
        const poll = await untilEnded('procs-timeout', id, 2000);
        expect(poll.details).toMatchObject({ status: 'failed', timedOut: true });
      } finally {
        killHostPids(`sleep 3003.${TAG}`);
        killHostPids(`sleep 3004.${TAG}`);
      }
      await betaUnaffectedAndNothingLeaked();
    });

    it('process remove of a running session ends every process of the sandbox', async () => {
      try {
        const id = await startEscapers('procs-remove', '3005', '3006');
        expect((await proc('alpha', 'procs-remove', { action: 'remove', sessionId: id })).text).toBe(
          `Removed session ${id} (termination requested).`,
        );
        expect(await eventually(noneLeft('3005', '3006'), 2000)).toBe(true);
        expect((await proc('alpha', 'procs-remove', { action: 'poll', sessionId: id })).text).toBe(`No session found for ${id}`);
      } finally {
        killHostPids(`sleep 3005.${TAG}`);
        killHostPids(`sleep 3006.${TAG}`);
      }
      await betaUnaffectedAndNothingLeaked();
    });

    it('timeoutSeconds 0 and over the cap both mean CODEMODE_SHELL_MAX_TIMEOUT_SECONDS (3 s), never "no timeout"', async () => {
      try {
        const answers = await Promise.all(
          [0, 3600].map((timeoutSeconds) =>
            sh('alpha', `cap-${timeoutSeconds}`, { command: `sleep 30.${TAG}`, timeoutSeconds, yieldMs: 8000 }),
          ),
        );
        for (const answer of answers) {
          expect(answer.details).toMatchObject({ status: 'failed', timedOut: true });
          expect(answer.text).toContain('Command timed out after 3 seconds.');
          expect(answer.details.durationMs as number).toBeGreaterThanOrEqual(2500);
          expect(answer.details.durationMs as number).toBeLessThan(7000);
        }
      } finally {
        killHostPids(`sleep 30.${TAG}`);
      }
      await betaUnaffectedAndNothingLeaked();
    });

    it('a fork flood fails inside that command only: capped at CODEMODE_SHELL_MAX_PROCESSES while beta starts commands', async () => {
      const marker = `sleep 20.${TAG}`;
      try {
        const flood = await sh('alpha', 'flood', { command: `for i in $(seq 400); do ${marker} & done; wait`, background: true });
        expect(flood.details.status).toBe('running');
        await sleep(700);
        // Only the sleeps themselves (the shell and bubblewrap carry the marker in their command lines too).
        expect(hostPidsWith(marker, { exact: true }).length).toBeLessThanOrEqual(64);
        await betaProbe(); // while alpha sits at its cap
        const ended = await untilEnded('flood', String(flood.details.sessionId), 6000);
        expect(ended.details.status).not.toBe('running');
        const log = await proc('alpha', 'flood', { action: 'log', sessionId: String(flood.details.sessionId) });
        expect(log.text).toContain('Resource temporarily unavailable');
        expect(await eventually(() => hostPidsWith(marker).length === 0, 3000)).toBe(true);
        expect((await sh('alpha', 'flood', { command: 'echo again' })).details).toMatchObject({ status: 'completed', aggregated: 'again' });
      } finally {
        killHostPids(marker);
      }
      await betaUnaffectedAndNothingLeaked();
    });
  });
});

describe('tenancy Mode: a worker without CODEMODE_API_KEYS serves a keyed deployment as multi-tenant (SPEC §10 "Mode")', () => {
  const canaries: Canaries = makeCanaries();
  let deployment: KeylessWorkerStack;

  beforeAll(async () => {
    deployment = await KeylessWorkerStack.start(apiKeysOf(canaries), tenancyEnv(canaries));
  });
  afterAll(async () => {
    await deployment?.stop();
  });

  it('confines shell commands and file tools although the worker never had the keys', async () => {
    const alpha = deployment.stack.client(canaries.keyAlpha);
    const beta = deployment.stack.client(canaries.keyBeta);
    const answer = (await alpha.shellExec('mode', {
      command: "pwd; id -u; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; env",
    })) as Answer;
    expect(answer.details).toMatchObject({ status: 'completed', cwd: '/workspace' });
    const [pwd, uid, iface] = lines(answer.details.aggregated);
    expect([pwd, iface]).toEqual(['/workspace', 'lo']);
    expect(uid).not.toBe('0');
    expect(serviceVariablesIn(JSON.stringify(answer))).toEqual([]);
    const result = await alpha.exec('mode', { title: 'escape', code: `${ATTEMPT} return await attempt(() => read({ path: '../x' }));` });
    expect(result).toMatchObject({ status: 'completed', value: escapes('../x') });
    expect(await beta.exec('mode', { title: 'probe', code: 'return 1+1' })).toMatchObject({ status: 'completed', value: 2 });
    expect(leaksIn([answer, result], canaries, deployment.stack)).toEqual([]);
  });

  // Stops the confined worker: runs after the tests that need it.
  it('worker shutdown ends every process of its sandboxes, setsid and double-forked ones included', async () => {
    const alpha = deployment.stack.client(canaries.keyAlpha);
    const [a, b] = [`sleep 3007.${TAG}`, `sleep 3008.${TAG}`];
    try {
      const started = await alpha.shellExec('shutdown', {
        command: `(setsid ${a} >/dev/null 2>&1 &); (nohup ${b} >/dev/null 2>&1 &); sleep 30`,
        background: true,
      });
      expect(started.details.status).toBe('running');
      expect(await eventually(() => hostPidsWith(a, { exact: true }).length > 0 && hostPidsWith(b, { exact: true }).length > 0, 2000)).toBe(
        true,
      );
      await deployment.worker.stop();
      expect(await eventually(() => hostPidsWith(a).length === 0 && hostPidsWith(b).length === 0, 500)).toBe(true);
    } finally {
      killHostPids(a);
      killHostPids(b);
    }
  });

  // After the shutdown above, this worker is the only one. CODEMODE_BWRAP_PATH is this
  // implementation's knob (not in SPEC) to simulate a host without bubblewrap.
  it('a multi-tenant worker that cannot confine is not ready and fails every shell call with "shell sandbox unavailable: <reason>" (auto never falls back)', async () => {
    const { url } = await deployment.addWorker({ CODEMODE_SHELL_SANDBOX: 'auto', CODEMODE_BWRAP_PATH: '/nonexistent/bwrap' });
    const ready = await fetch(`${url}/health/ready`);
    const readyText = await ready.text();
    expect(ready.status).toBe(503);
    const alpha = deployment.stack.client(canaries.keyAlpha);
    const answer = await alpha.shellExec('nobwrap', { command: 'echo hi' }, { signal: AbortSignal.timeout(20_000) });
    expect(answer).toMatchObject({ text: expect.stringMatching(/^shell sandbox unavailable: \S/), details: { status: 'failed' } });
    expect(readyText).toContain(answer.text.slice('shell sandbox unavailable: '.length));
    expect(leaksIn([answer, readyText], canaries, deployment.stack)).toEqual([]);
  });
});
