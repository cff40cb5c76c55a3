import { randomInt } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { CodeModeClient } from '@codemode/client';
import type { CodeModeResult, ProcessInput, ShellExecInput } from '@codemode/contracts';
import { REDIS_URL, TestStack } from '../utils/test-stack';
import {
  apiKeysOf,
  eventually,
  hostPidsWith,
  KeylessWorkerStack,
  killHostPids,
  leaksIn,
  makeCanaries,
  rawRequest,
  removeHostFiles,
  serviceVariablesIn,
  sleep,
  tenancyEnv,
  type Canaries,
} from './tenancy-helpers';

/**
 * SPEC §10, adversarially: two tenants (alpha attacks, beta is the bystander) on one deployment
 * with bubblewrap confinement and small caps. Each test tries one escape, asserts it fails with
 * the SPEC's strings, and ends with `betaUnaffectedAndNothingLeaked()`: beta's trivial cell and
 * shell command still work and no answer of the test carried a canary or a host path.
 */

jest.setTimeout(60_000);

interface Answer {
  text: string;
  details: Record<string, unknown>;
}
/** What the in-cell `attempt` helper returns for one call. */
interface Outcome {
  ok: boolean;
  value?: unknown;
  message?: string;
}
type Tenant = 'alpha' | 'beta';

/** Numeric tag that makes this run's `sleep` markers and probe file names unique on the host. */
const TAG = String(randomInt(10_000, 99_999));
const MAX_FILE_BYTES = 1_048_576;
const WORKSPACE_MAX_BYTES = 8_388_608;
/** What SPEC §10 mounts at the sandbox root (`/bin`, `/lib*` with `/usr`; `/etc`, `/tmp`, `/dev`, `/proc`, `/workspace`). */
const SANDBOX_ROOT_ENTRIES = new Set(['bin', 'dev', 'etc', 'lib', 'lib32', 'lib64', 'libx32', 'proc', 'sbin', 'tmp', 'usr', 'workspace']);
/** SPEC §10 environment, plus what bash itself exports (PWD, OLDPWD, SHLVL, `_`) and the call's env. */
const ALLOWED_ENV = new Set(['PATH', 'HOME', 'SHELL', 'LANG', 'TERM', 'OPENCLAW_SHELL', 'PWD', 'OLDPWD', 'SHLVL', '_', 'PROBE_VAR']);
const HOST_PROBE_FILES = ['/usr', '/etc', '', '/usr/bin'].map((dir) => `${dir}/probe-${TAG}`);
/** In-cell helper: runs a call, returns `{ok, value}` (optionally summarized) or `{ok:false, message}`. */
const ATTEMPT = `const attempt = async (f, show) => {
  try { const v = await f(); return { ok: true, value: show ? show(v) : v }; }
  catch (e) { return { ok: false, message: String(e && e.message) }; }
};`;
const escapes = (path: string) => ({ ok: false, message: `path escapes the workspace: ${path}` });
const lines = (text: unknown) => String(text).split(/\r?\n/);

describe('tenancy: two tenants cannot escape their confinement (SPEC §10)', () => {
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

  beforeAll(async () => {
    stack = await TestStack.start({ apiKeys: apiKeysOf(canaries), env: tenancyEnv(canaries) });
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

  describe('Ids', () => {
    const DOT_IDS = ['.', '..', '...', '%2E%2E', '%2e.', '%2E'];

    it.each(DOT_IDS)('exec and wait with session id %s answer 200 failed/invalid_input (failurePhase input)', async (id) => {
      const exec = await rawRequest(stack.baseUrl, 'POST', `/v1/sessions/${id}/exec`, canaries.keyAlpha, {
        title: 't',
        code: 'return 1+1',
      });
      const wait = await rawRequest(stack.baseUrl, 'POST', `/v1/sessions/${id}/wait`, canaries.keyAlpha, {
        runId: 'cm_00000000-0000-4000-8000-000000000000',
      });
      seen.push(exec.body, wait.body);
      expect(exec).toMatchObject({ status: 200, body: { status: 'failed', code: 'invalid_input', failurePhase: 'input' } });
      expect(wait).toMatchObject({ status: 200, body: { status: 'failed', code: 'invalid_input', failurePhase: 'input' } });
      await betaUnaffectedAndNothingLeaked();
    });

    it.each(DOT_IDS)('every other session route with session id %s answers HTTP 400 invalid_input', async (id) => {
      const routes: Array<[string, string, unknown?]> = [
        ['GET', ''],
        ['PUT', '', {}],
        ['POST', '/shell/exec', { command: 'echo hi' }],
        ['POST', '/process', { action: 'list' }],
        ['GET', '/tools'],
        ['PUT', '/tools', { tools: [] }],
        ['GET', '/store'],
        ['GET', '/events'],
        ['GET', '/transcript'],
      ];
      const answers = await Promise.all(
        routes.map(async ([method, suffix, body]) => {
          const res = await rawRequest(stack.baseUrl, method, `/v1/sessions/${id}${suffix}`, canaries.keyAlpha, body);
          seen.push(res.body);
          return [`${method} ${suffix || '/'}`, res.status, (res.body as { code?: unknown }).code];
        }),
      );
      expect(answers).toEqual(routes.map(([method, suffix]) => [`${method} ${suffix || '/'}`, 400, 'invalid_input']));
      await betaUnaffectedAndNothingLeaked();
    });

    it('ids with dots that are not dots only (..x, a..b) still work', async () => {
      expect(await cell('alpha', '..x', 'return 1+1')).toMatchObject({ status: 'completed', value: 2 });
      expect((await sh('alpha', 'a..b', { command: 'pwd' })).details).toMatchObject({ status: 'completed', aggregated: '/workspace' });
      await betaUnaffectedAndNothingLeaked();
    });
  });

  describe("Another tenant's files", () => {
    it("alpha cannot reach beta's beta/<sid>/secret.txt with read, ls, find or grep by any relative path", async () => {
      const value = completedValue(
        await cell(
          'alpha',
          'spy',
          `${ATTEMPT}
          const out = {};
          for (const p of ['../beta/vault/secret.txt', '../../beta/vault/secret.txt', '../../../beta/vault/secret.txt', 'x/../../../beta/vault/secret.txt']) {
            out['read ' + p] = await attempt(() => read({ path: p }), (v) => v.content);
          }
          for (const p of ['..', '../..', '../../beta', '../../beta/vault']) {
            out['ls ' + p] = await attempt(() => ls({ path: p }), (v) => v.entries);
            out['find ' + p] = await attempt(() => find({ pattern: '**/secret.txt', path: p }), (v) => v.files);
            out['grep ' + p] = await attempt(() => grep({ pattern: 'canary', path: p }), (v) => v.matches);
          }
          out['own vault'] = await attempt(() => read({ path: 'secret.txt' }), (v) => v.content);
          return out;`,
        ),
      );
      const expected: Record<string, unknown> = {};
      for (const p of [
        '../beta/vault/secret.txt',
        '../../beta/vault/secret.txt',
        '../../../beta/vault/secret.txt',
        'x/../../../beta/vault/secret.txt',
      ]) {
        expected[`read ${p}`] = escapes(p);
      }
      for (const p of ['..', '../..', '../../beta', '../../beta/vault']) {
        Object.assign(expected, { [`ls ${p}`]: escapes(p), [`find ${p}`]: escapes(p), [`grep ${p}`]: escapes(p) });
      }
      expect(value).toMatchObject(expected);
      // Alpha's own session "vault" is unrelated to beta's: there is no secret.txt in it.
      expect(value['own vault']).toMatchObject({ ok: false });
      await betaUnaffectedAndNothingLeaked();
    });

    it("alpha cannot reach beta's secret.txt through its host path in a cell (the error only echoes what alpha wrote)", async () => {
      const hostPath = `${stack.workspaceRoot}/beta/vault/secret.txt`;
      const result = await cell(
        'alpha',
        'spy',
        `${ATTEMPT} return await attempt(() => read({ path: ${JSON.stringify(hostPath)} }), (v) => v.content);`,
      );
      expect(completedValue(result)).toEqual(escapes(hostPath));
      expect(JSON.stringify(result)).not.toContain(canaries.betaFile);
      await betaProbe();
    });

    it("alpha cannot reach beta's secret.txt from a shell command, by relative, host or searched path, nor as workdir", async () => {
      const answer = await sh('alpha', 'spy', {
        command: [
          'for p in ../beta/vault/secret.txt ../../beta/vault/secret.txt ../../../beta/vault/secret.txt "$HOSTROOT/beta/vault/secret.txt"; do cat "$p" 2>/dev/null; done',
          'find / -maxdepth 5 \\( -path /proc -o -path /usr -o -path /sys \\) -prune -o -name secret.txt -print 2>/dev/null',
          'echo done',
        ].join('; '),
        env: { HOSTROOT: stack.workspaceRoot },
      });
      expect(answer.details).toMatchObject({ status: 'completed', aggregated: 'done' });
      const viaWorkdir = await sh('alpha', 'spy', { command: 'cat secret.txt', workdir: '../../beta/vault' });
      expect(viaWorkdir.details.status).toBe('failed');
      expect(viaWorkdir.text).toContain('../../beta/vault');
      await betaUnaffectedAndNothingLeaked();
    });
  });

  describe('Same names in two tenants', () => {
    it("alpha cannot list, poll or kill beta's shell sessions, even with the same session id and agentId", async () => {
      await clients.beta.putSession('shared', { agentId: 'crew' });
      await clients.alpha.putSession('shared', { agentId: 'crew' });
      const started = await sh('beta', 'shared', { command: 'sleep 2', background: true });
      const id = String(started.details.sessionId);
      expect((await proc('alpha', 'shared', { action: 'list' })).text).toBe('No running or recent sessions.');
      // Beta's id gets the very answer an id that exists nowhere gets: nothing tells alpha it exists.
      for (const action of ['poll', 'log', 'write', 'kill', 'remove']) {
        const foreign = await proc('alpha', 'shared', { action, sessionId: id, data: 'x' });
        const unknown = await proc('alpha', 'shared', { action, sessionId: 'no-such-session', data: 'x' });
        expect([action, foreign]).toEqual([action, JSON.parse(JSON.stringify(unknown).split('no-such-session').join(id))]);
      }
      expect((await proc('alpha', 'shared', { action: 'poll', sessionId: id })).text).toBe(`No session found for ${id}`);
      expect((await proc('beta', 'shared', { action: 'poll', sessionId: id })).details.status).toBe('running');
      await proc('beta', 'shared', { action: 'kill', sessionId: id });
      await betaUnaffectedAndNothingLeaked();
    });

    it("alpha cannot read, wait on or abort beta's parked run in a session of the same name", async () => {
      const parked = await cell('beta', 'shared', "await yield_control('pause'); return 3;");
      expect(parked).toMatchObject({ status: 'waiting', reason: 'yield' });
      const runId = (parked as { runId: string }).runId;
      const get = await rawRequest(stack.baseUrl, 'GET', `/v1/sessions/shared/runs/${runId}`, canaries.keyAlpha);
      const abort = await rawRequest(stack.baseUrl, 'DELETE', `/v1/sessions/shared/runs/${runId}`, canaries.keyAlpha);
      const wait = await clients.alpha.wait('shared', runId);
      seen.push(get.body, abort.body, wait);
      expect([get.status, abort.status]).toEqual([404, 404]);
      expect(wait).toMatchObject({ status: 'failed', error: 'code mode run is unavailable or expired.' });
      expect(await clients.beta.wait('shared', runId)).toMatchObject({ status: 'completed', value: 3 });
      await betaUnaffectedAndNothingLeaked();
    });
  });

  describe('Shell confinement', () => {
    it('env: no canary, API key, CODEMODE_ or REDIS_ variable in /proc/$PPID/environ, /proc/1/environ, env or /proc/*/environ', async () => {
      const dumps = [String.raw`tr '\0' '\n' < /proc/$PPID/environ`, 'cat /proc/1/environ', 'env', 'cat /proc/*/environ 2>/dev/null'];
      const answers = await Promise.all(dumps.map((command) => sh('alpha', 'env', { command })));
      expect(answers.map((a, i) => [dumps[i], serviceVariablesIn(JSON.stringify(a))])).toEqual(dumps.map((d) => [d, []]));
      const inCell = completedValue<string>(
        await cell('alpha', 'env', "const r = await exec({ command: 'env; cat /proc/1/environ' }); return r.details.aggregated;"),
      );
      expect(serviceVariablesIn(String(inCell))).toEqual([]);
      expect(lines(inCell)).toEqual(expect.arrayContaining(['OPENCLAW_SHELL=exec', 'HOME=/workspace']));
      await betaUnaffectedAndNothingLeaked();
    });

    it('env: a command sees PATH, HOME=/workspace, SHELL, LANG, TERM, OPENCLAW_SHELL=exec and its own env, nothing else of the worker', async () => {
      const answer = await sh('alpha', 'env', { command: 'env', env: { PROBE_VAR: 'probe' } });
      expect(answer.details).toMatchObject({ status: 'completed', exitCode: 0 });
      const vars = Object.fromEntries(
        lines(answer.details.aggregated)
          .filter((line) => line.includes('='))
          .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
      );
      expect(Object.keys(vars).filter((name) => !ALLOWED_ENV.has(name))).toEqual([]);
      expect(vars).toMatchObject({ OPENCLAW_SHELL: 'exec', HOME: '/workspace', SHELL: '/bin/bash', PROBE_VAR: 'probe' });
      expect(vars.PATH).toEqual(expect.any(String));
      await betaUnaffectedAndNothingLeaked();
    });

    it('network: Redis, the API and the worker metrics port are unreachable; only lo exists', async () => {
      const ports = [new URL(REDIS_URL).port || '6379', new URL(stack.baseUrl).port, new URL(stack.workerUrl(stack.workers[0])).port];
      const command = [
        `for p in ${ports.join(' ')}; do if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo "open $p"; else echo "closed $p"; fi; done`,
        "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
      ].join('; ');
      const expected = [...ports.map((p) => `closed ${p}`), 'lo'].join('\n');
      expect((await sh('alpha', 'net', { command })).details).toMatchObject({ status: 'completed', aggregated: expected });
      const redis = await sh('alpha', 'net', { command: `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${ports[0]}'` });
      expect(redis.details.exitCode).toBe(1);
      expect(redis.text).toContain('(Command exited with code 1)');
      const inCell = completedValue<string>(
        await cell('alpha', 'net', `const r = await exec({ command: ${JSON.stringify(command)} }); return r.details.aggregated;`),
      );
      expect(inCell).toBe(expected);
      await betaUnaffectedAndNothingLeaked();
    });

    it('filesystem: cwd is /workspace, / shows only the sandbox (no tenant folders), system paths are read-only, /etc/shadow unreadable', async () => {
      const where = await sh('alpha', 'fs', { command: 'pwd; ls -A ../.. | tr "\\n" " "; echo; ls -A / | tr "\\n" " "' });
      expect(where.details).toMatchObject({ status: 'completed', cwd: '/workspace' });
      const [pwd, up, root = ''] = lines(where.details.aggregated);
      expect(pwd).toBe('/workspace');
      expect(up.trim()).toBe(root.trim());
      const entries = root.trim().split(/\s+/);
      expect(entries.filter((e) => !SANDBOX_ROOT_ENTRIES.has(e))).toEqual([]);
      expect(entries).toEqual(expect.arrayContaining(['usr', 'etc', 'tmp', 'dev', 'proc', 'workspace']));

      const writes = await sh('alpha', 'fs', {
        command: `for f in ${HOST_PROBE_FILES.join(' ')}; do if (echo x > "$f") 2>/dev/null; then echo "wrote $f"; rm -f "$f"; else echo "refused $f"; fi; done`,
      });
      expect(writes.details.aggregated).toBe(HOST_PROBE_FILES.map((f) => `refused ${f}`).join('\n'));
      const shadow = await sh('alpha', 'fs', {
        command: 'if cat /etc/shadow >/dev/null 2>&1; then echo readable; else echo unreadable; fi',
      });
      expect(shadow.details.aggregated).toBe('unreadable');
      await betaUnaffectedAndNothingLeaked();
    });

    it('filesystem: writing in /workspace works and a cell of the same session reads it; workdir resolves inside /workspace', async () => {
      const wrote = await sh('alpha', 'fs', { command: `mkdir -p sub && echo hello-${TAG} > note.txt && echo written` });
      expect(wrote.details).toMatchObject({ status: 'completed', aggregated: 'written', cwd: '/workspace' });
      const read = completedValue<string>(await cell('alpha', 'fs', "const r = await read({ path: 'note.txt' }); return r.content;"));
      expect(String(read).trim()).toBe(`hello-${TAG}`);
      expect((await sh('alpha', 'fs', { command: 'pwd', workdir: 'sub' })).details).toMatchObject({
        aggregated: '/workspace/sub',
        cwd: '/workspace/sub',
      });
      expect((await sh('alpha', 'fs', { command: 'pwd', workdir: '/workspace/sub' })).details).toMatchObject({
        aggregated: '/workspace/sub',
        cwd: '/workspace/sub',
      });
      const outside = await sh('alpha', 'fs', { command: 'pwd', workdir: '../..' });
      expect(outside.details.status).toBe('failed');
      expect(outside.text).toContain('../..');
      const bg = await sh('alpha', 'fs', { command: 'sleep 0.2', background: true });
      const list = await proc('alpha', 'fs', { action: 'list' });
      expect(list.details.sessions).toEqual(
        expect.arrayContaining([expect.objectContaining({ sessionId: bg.details.sessionId, cwd: '/workspace' })]),
      );
      await betaUnaffectedAndNothingLeaked();
    });

    it('privilege: commands do not run as root, cannot create user namespaces, and /proc shows only the sandbox', async () => {
      const answer = await sh('alpha', 'priv', {
        command: [
          'id -u',
          'unshare -U true 2>/dev/null; echo "U=$?"',
          'unshare -r true 2>/dev/null; echo "r=$?"',
          "ls /proc | grep -cE '^[0-9]+$'",
        ].join('; '),
      });
      const [uid, userns, rootns, count] = lines(answer.details.aggregated);
      expect(uid).toMatch(/^\d+$/);
      expect(uid).not.toBe('0');
      expect(userns).toMatch(/^U=[1-9]\d*$/);
      expect(rootns).toMatch(/^r=[1-9]\d*$/);
      expect(Number(count)).toBeLessThanOrEqual(10);
      await betaUnaffectedAndNothingLeaked();
    });

    it('pty: pty:true works inside the sandbox (tty prints /dev/pts/N, cwd /workspace, not root)', async () => {
      const answer = await sh('alpha', 'pty', { command: 'tty; pwd; id -u', pty: true });
      expect(answer.details).toMatchObject({ status: 'completed', cwd: '/workspace' });
      const [tty, pwd, uid] = lines(answer.details.aggregated);
      expect(tty).toMatch(/^\/dev\/pts\/\d+$/);
      expect(pwd).toBe('/workspace');
      expect(uid).not.toBe('0');
      await betaUnaffectedAndNothingLeaked();
    });
  });

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
        removed = removeHostFiles(stack.workspaceRoot, prefix);
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

  describe('File tools', () => {
    it('symlinks made by a shell command, absolute paths and .. are refused with "path escapes the workspace: <path>"', async () => {
      const made = await sh('alpha', 'links', {
        command: 'ln -s /etc/passwd p; ln -s / root; ln -s ../.. up; mkdir -p d; echo inside > d/ok.txt; ln -s d/ok.txt good; echo made',
      });
      expect(made.details).toMatchObject({ status: 'completed', aggregated: 'made' });
      const value = completedValue(
        await cell(
          'alpha',
          'links',
          `${ATTEMPT}
          const names = (v) => v.entries;
          return {
            'read p': await attempt(() => read({ path: 'p' }), (v) => v.content.slice(0, 40)),
            'ls root': await attempt(() => ls({ path: 'root' }), names),
            'ls up': await attempt(() => ls({ path: 'up' }), names),
            'find root/etc': await attempt(() => find({ pattern: 'passwd', path: 'root/etc' }), (v) => v.files),
            'grep p': await attempt(() => grep({ pattern: 'root', path: 'p' }), (v) => v.matches.length),
            'grep up': await attempt(() => grep({ pattern: 'inside', path: 'up' }), (v) => v.matches.length),
            'read /etc/passwd': await attempt(() => read({ path: '/etc/passwd' }), (v) => v.content.slice(0, 40)),
            'read ../x': await attempt(() => read({ path: '../x' }), (v) => v.content),
            'read good': await attempt(() => read({ path: 'good' }), (v) => v.content.trim()),
          };`,
        ),
      );
      expect(value).toEqual({
        'read p': escapes('p'),
        'ls root': escapes('root'),
        'ls up': escapes('up'),
        'find root/etc': escapes('root/etc'),
        'grep p': escapes('p'),
        'grep up': escapes('up'),
        'read /etc/passwd': escapes('/etc/passwd'),
        'read ../x': escapes('../x'),
        'read good': { ok: true, value: 'inside' },
      });
      await betaUnaffectedAndNothingLeaked();
    });

    it('a find or grep over the whole workspace never returns what a symlink outside points to', async () => {
      const value = completedValue(
        await cell(
          'alpha',
          'links',
          `${ATTEMPT}
          return {
            grep: await attempt(() => grep({ pattern: ':0:0:', path: '.' }), (v) => v.matches.map((m) => m.path)),
            find: await attempt(() => find({ pattern: '**/passwd' }), (v) => v.files),
          };`,
        ),
      );
      for (const outcome of [value.grep, value.find]) {
        if (outcome.ok) expect(outcome.value).toEqual([]);
        else expect(outcome.message).toMatch(/^path escapes the workspace: /);
      }
      await betaUnaffectedAndNothingLeaked();
    });
  });

  // Last on this stack: a worker that does stall on these patterns would stall every later test.
  describe('File tools: patterns', () => {
    const GLOB = `${'a*'.repeat(20)}b`;
    const REGEX = '(a+)+$';

    it('a catastrophic grep regex and find/grep globs answer (result or "pattern too expensive") while beta is served', async () => {
      const made = await sh('alpha', 'patterns', {
        command: `head -c 50000 /dev/zero | tr '\\0' a > long.txt; echo b >> long.txt; mkdir -p g; touch "g/$(head -c 200 /dev/zero | tr '\\0' a)"; echo made`,
      });
      expect(made.details).toMatchObject({ status: 'completed', aggregated: 'made' });
      let alphaDone = false;
      const alpha = cell(
        'alpha',
        'patterns',
        `${ATTEMPT}
        return {
          grep: await attempt(() => grep({ pattern: ${JSON.stringify(REGEX)}, path: 'long.txt' }), (v) => v.matches.length),
          find: await attempt(() => find({ pattern: ${JSON.stringify(GLOB)}, path: 'g' }), (v) => v.files),
          grepGlob: await attempt(() => grep({ pattern: 'a', path: 'g', glob: ${JSON.stringify(GLOB)} }), (v) => v.matches.length),
        };`,
        25_000,
      ).finally(() => {
        alphaDone = true;
      });
      await sleep(100);
      const betaProbes: Array<{ ms: number; result: CodeModeResult }> = [];
      do {
        const started = Date.now();
        const result = await cell('beta', 'beta-probe', 'return 1+1', 25_000);
        betaProbes.push({ ms: Date.now() - started, result });
      } while (!alphaDone);
      expect(betaProbes.map((p) => p.result)).toEqual(betaProbes.map(() => expect.objectContaining({ status: 'completed', value: 2 })));
      // Answered within beta's default 10 s budget: no pattern stalls the worker (timings not tightened).
      expect(Math.max(...betaProbes.map((p) => p.ms))).toBeLessThan(10_000);

      const value = completedValue(await alpha);
      const answered = (outcome: Outcome, pattern: string, empty: unknown) =>
        outcome.ok ? expect(outcome.value).toEqual(empty) : expect(outcome.message).toBe(`pattern too expensive: ${pattern}`);
      answered(value.grep, REGEX, 0);
      answered(value.find, GLOB, []);
      answered(value.grepGlob, GLOB, 0);
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
