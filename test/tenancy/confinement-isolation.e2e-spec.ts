import { REDIS_URL } from '../utils/test-stack';
import { ATTEMPT, confinementTenants, escapes, HOST_PROBE_FILES, lines, TAG } from './confinement-tenants';
import { rawRequest, serviceVariablesIn } from './tenancy-helpers';

/**
 * SPEC §10, adversarially (setup and leak check in test/tenancy/confinement-tenants.ts): alpha cannot
 * reach beta by ids, paths or same-named sessions and runs, and a shell command sees only its
 * sandbox: its own environment, no network but lo, a read-only system, no root.
 */

jest.setTimeout(60_000);

/** What SPEC §10 mounts at the sandbox root (`/bin`, `/lib*` with `/usr`; `/etc`, `/tmp`, `/dev`, `/proc`, `/workspace`). */
const SANDBOX_ROOT_ENTRIES = new Set(['bin', 'dev', 'etc', 'lib', 'lib32', 'lib64', 'libx32', 'proc', 'sbin', 'tmp', 'usr', 'workspace']);
/** SPEC §10 environment, plus what bash itself exports (PWD, OLDPWD, SHLVL, `_`) and the call's env. */
const ALLOWED_ENV = new Set(['PATH', 'HOME', 'SHELL', 'LANG', 'TERM', 'OPENCLAW_SHELL', 'PWD', 'OLDPWD', 'SHLVL', '_', 'PROBE_VAR']);

describe('tenancy: two tenants cannot escape their confinement (SPEC §10)', () => {
  const tenants = confinementTenants();
  const { canaries, remember, sh, proc, cell, completedValue, betaProbe, betaUnaffectedAndNothingLeaked } = tenants;

  describe('Ids', () => {
    const DOT_IDS = ['.', '..', '...', '%2E%2E', '%2e.', '%2E'];

    it.each(DOT_IDS)('exec and wait with session id %s answer 200 failed/invalid_input (failurePhase input)', async (id) => {
      const exec = await rawRequest(tenants.stack.baseUrl, 'POST', `/v1/sessions/${id}/exec`, canaries.keyAlpha, {
        title: 't',
        code: 'return 1+1',
      });
      const wait = await rawRequest(tenants.stack.baseUrl, 'POST', `/v1/sessions/${id}/wait`, canaries.keyAlpha, {
        runId: 'cm_00000000-0000-4000-8000-000000000000',
      });
      remember(exec.body, wait.body);
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
          const res = await rawRequest(tenants.stack.baseUrl, method, `/v1/sessions/${id}${suffix}`, canaries.keyAlpha, body);
          remember(res.body);
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
      const hostPath = `${tenants.stack.workspaceRoot}/beta/vault/secret.txt`;
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
        env: { HOSTROOT: tenants.stack.workspaceRoot },
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
      await tenants.clients.beta.putSession('shared', { agentId: 'crew' });
      await tenants.clients.alpha.putSession('shared', { agentId: 'crew' });
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
      const get = await rawRequest(tenants.stack.baseUrl, 'GET', `/v1/sessions/shared/runs/${runId}`, canaries.keyAlpha);
      const abort = await rawRequest(tenants.stack.baseUrl, 'DELETE', `/v1/sessions/shared/runs/${runId}`, canaries.keyAlpha);
      const wait = await tenants.clients.alpha.wait('shared', runId);
      remember(get.body, abort.body, wait);
      expect([get.status, abort.status]).toEqual([404, 404]);
      expect(wait).toMatchObject({ status: 'failed', error: 'code mode run is unavailable or expired.' });
      expect(await tenants.clients.beta.wait('shared', runId)).toMatchObject({ status: 'completed', value: 3 });
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
      const ports = [
        new URL(REDIS_URL).port || '6379',
        new URL(tenants.stack.baseUrl).port,
        new URL(tenants.stack.workerUrl(tenants.stack.workers[0])).port,
      ];
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
});
