import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CONFIG, details, makeRegistry, pollUntilExit, processesMatching, waitFor } from '../test-support';
import type { SandboxSetup } from './bwrap-invocation';
import type { Confinement } from './confinement';
import { probeSandbox } from './sandbox-probe';
import { writeSandboxEtc } from './sandbox-etc';

/**
 * Real bubblewrap, real processes: each rule of SPEC §10 "Shell confinement" attempted from
 * inside a sandbox, the way a hostile tenant's command would. The worker's environment holds a
 * canary that must never reach a command.
 */
const CANARY = `canary-${process.pid}-secret`;
const etcDir = writeSandboxEtc();
const setup: SandboxSetup = {
  bwrapPath: '/usr/bin/bwrap',
  prlimitPath: '/usr/bin/prlimit',
  etcDir,
  limits: { maxProcesses: 32, memoryBytes: 256 * 1024 * 1024, maxFileBytes: 1024 * 1024, openFiles: 1024, tmpBytes: 8 * 1024 * 1024 },
};
const asRoot = process.getuid?.() === 0;
const tenantA: Confinement = { kind: 'bwrap', identity: asRoot ? { uid: 231_001, gid: 231_001 } : null };
const tenantB: Confinement = { kind: 'bwrap', identity: asRoot ? { uid: 231_002, gid: 231_002 } : null };

function confinedRegistry(extra: Parameters<typeof makeRegistry>[0] = {}) {
  return makeRegistry({ sandbox: setup, baseEnv: { PATH: '/usr/bin:/bin', CANARY_TOKEN: CANARY }, maxTimeoutSeconds: 2, ...extra });
}

afterAll(() => rmSync(etcDir, { recursive: true, force: true }));

describe('confined shell commands (bubblewrap)', () => {
  it('the probe passes here, and names what is missing when bubblewrap is not installed', async () => {
    expect(await probeSandbox(setup, tenantA.kind === 'bwrap' ? tenantA.identity : null)).toEqual({ ok: true });
    expect(await probeSandbox({ ...setup, bwrapPath: '/nonexistent/bwrap' }, null)).toEqual({
      ok: false,
      reason: 'bubblewrap is not installed (no /nonexistent/bwrap)',
    });
  });

  it('runs in /workspace as an unprivileged user, with a clean environment and none of the worker’s', async () => {
    const { registry, workspaceRoot } = confinedRegistry();
    const answer = await registry.exec(
      's',
      {
        command: 'id -u; pwd; echo "$HOME $OPENCLAW_SHELL $MINE"; cat /proc/1/environ /proc/self/environ | tr "\\0" "\\n" | sort -u',
        env: { MINE: 'mine' },
      },
      CONFIG,
      { confinement: tenantA },
    );
    expect(details(answer)).toMatchObject({ status: 'completed', cwd: '/workspace' });
    const lines = answer.text.split('\n');
    expect(lines.slice(0, 3)).toEqual(['1000', '/workspace', '/workspace exec mine']);
    expect(answer.text).not.toContain(CANARY);
    expect(answer.text).not.toContain(workspaceRoot);
    await registry.shutdown();
  });

  it('sees only its own processes, no network but loopback, and cannot make another user namespace', async () => {
    const { registry } = confinedRegistry();
    const answer = await registry.exec(
      's',
      {
        command:
          'ls /proc | grep -c "^[0-9]"; ls /sys/class/net 2>/dev/null || tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "; unshare -U true 2>/dev/null && echo nested || echo no-userns; (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null && echo redis || echo no-redis',
      },
      CONFIG,
      { confinement: tenantA },
    );
    const [procs, ...rest] = answer.text.split('\n');
    expect(Number(procs)).toBeLessThan(10);
    expect(rest).toEqual(['lo', 'no-userns', 'no-redis']);
    await registry.shutdown();
  });

  it('writes only its workspace and a private /tmp; the rest of the system is read-only or absent', async () => {
    const { registry, workspaceRoot } = confinedRegistry();
    const answer = await registry.exec(
      's',
      {
        command:
          'for p in /usr/x /etc/x /x /workspace/ok /tmp/ok; do (echo > $p) 2>/dev/null && echo "w $p" || echo "r $p"; done; ls /etc/shadow 2>&1 | head -1; ls /root 2>&1 | head -1',
      },
      CONFIG,
      { confinement: tenantA },
    );
    expect(answer.text.split('\n').slice(0, 5)).toEqual(['r /usr/x', 'r /etc/x', 'r /x', 'w /workspace/ok', 'w /tmp/ok']);
    expect(answer.text).toContain('No such file or directory');
    expect(statSync(path.join(workspaceRoot, 'ok')).isFile()).toBe(true);
    if (asRoot) expect(statSync(workspaceRoot).uid).toBe(231_001);
    await registry.shutdown();
  });

  it('caps processes, file size and /tmp inside the command only; another tenant still starts', async () => {
    const { registry } = confinedRegistry();
    const flood = registry.exec(
      's',
      { command: 'for i in $(seq 100); do sleep 5 & done 2>&1 | grep -c "fork" ; wait', yieldMs: 1500 },
      CONFIG,
      { confinement: tenantA },
    );
    await new Promise((r) => setTimeout(r, 300));
    const other = await registry.exec('t', { command: 'sleep 0.1 & sleep 0.1 & wait; echo started' }, CONFIG, { confinement: tenantB });
    expect(other.text).toBe('started');
    await flood;
    const big = await registry.exec(
      's',
      { command: 'head -c 2000000 /dev/zero > big; echo $?; stat -c %s big; head -c 9000000 /dev/zero > /tmp/t; echo $?' },
      CONFIG,
      { confinement: tenantA },
    );
    const [bigExit, bigSize, tmpExit] = big.text.split('\n').filter((l) => /^\d+$/.test(l));
    expect(Number(bigExit)).not.toBe(0);
    expect(Number(bigSize)).toBeLessThanOrEqual(1024 * 1024);
    expect(Number(tmpExit)).not.toBe(0);
    const nofile = await registry.exec('s', { command: 'ulimit -n; ulimit -u' }, CONFIG, { confinement: tenantA });
    expect(nofile.text).toBe('1024\n32');
    await registry.shutdown();
  });

  it('caps /dev/shm like /tmp, and /dev itself is read-only (its devices still work)', async () => {
    const { registry } = confinedRegistry();
    const answer = await registry.exec(
      's',
      {
        command: [
          // Files under the 1 MiB file cap, so the filesystem's own cap is what stops them.
          '(for i in $(seq 12); do head -c 900000 /dev/zero > /dev/shm/f$i || exit; done) 2>&1 | grep -o "No space left on device" | head -1',
          '(echo x > /dev/planted) 2>&1 | grep -o "Read-only file system"',
          'mkdir /dev/d 2>&1 | grep -o "Read-only file system"',
          'echo ok > /dev/null; echo "null $?"',
          'df -B1 --output=size /dev/shm /tmp | tail -n 2 | tr -d " "',
        ].join('; '),
      },
      CONFIG,
      { confinement: tenantA },
    );
    const lines = answer.text.split('\n');
    expect(lines.slice(0, 4)).toEqual(['No space left on device', 'Read-only file system', 'Read-only file system', 'null 0']);
    expect(lines.slice(4).map(Number)).toEqual([8 * 1024 * 1024, 8 * 1024 * 1024]);
    await registry.shutdown();
  });

  it('refuses fallocate and io_uring, which would take disk faster than the watchdog sees', async () => {
    const { registry, workspaceRoot } = confinedRegistry();
    const answer = await registry.exec(
      's',
      {
        command: `fallocate -l 900000 f 2>&1; echo "rc=$?"; perl -e 'my $p = "\\0" x 120; print syscall(425, 8, $p) == -1 ? "uring $!\\n" : "uring open\\n"'; ls -l /proc/self/fd /proc/1/fd | grep -c seccomp; ls /proc/self/fd | grep -cx 4`,
      },
      CONFIG,
      { confinement: tenantA },
    );
    const out = answer.text.split('\n');
    expect(out[0]).toMatch(/Operation not supported/);
    expect(out[1]).toMatch(/^rc=[1-9]/);
    expect(out[2]).toBe('uring Function not implemented');
    // The program bubblewrap read from fd 3 is not left open inside.
    expect(out[3]).toBe('0');
    // Nor is the pipe bubblewrap reported its sandbox's pid on (fd 4).
    expect(out[4]).toBe('0');
    expect(statSync(path.join(workspaceRoot, 'f')).blocks).toBe(0);
    await registry.shutdown();
  });

  it('kill ends every process of the sandbox, setsid and double-forked ones included', async () => {
    const { registry } = confinedRegistry();
    const id = details(
      await registry.exec(
        's',
        { command: '(setsid sleep 3101 &); (nohup sleep 3102 >/dev/null 2>&1 &); sleep 3103', background: true },
        CONFIG,
        { confinement: tenantA },
      ),
    ).sessionId;
    // The sandbox's bwrap, prlimit and bash lines carry the command text too.
    await waitFor(() => processesMatching('sleep 310').filter((line) => /\ssleep 310\d$/.test(line)).length >= 3);
    await registry.process('s', { action: 'kill', sessionId: id }, CONFIG);
    await waitFor(() => processesMatching('sleep 310').length === 0, 3000);
    await registry.shutdown();
  });

  it('a kill while the sandbox is still being set up ends it too (its pid 1 has not yet asked to die with bubblewrap)', async () => {
    const { registry } = confinedRegistry();
    // Killed as soon as it starts: bubblewrap has made the sandbox's pid 1, which is setting up.
    for (let round = 0; round < 5; round += 1) {
      const id = details(
        await registry.exec('s', { command: `sleep 330${round}`, background: true }, CONFIG, { confinement: tenantA }),
      ).sessionId;
      await registry.process('s', { action: 'kill', sessionId: id }, CONFIG);
    }
    await waitFor(() => processesMatching('sleep 330').length === 0, 3000);
    await registry.shutdown();
  });

  it('timeoutSeconds 0 or over the cap means the cap, and the timeout ends detached processes too', async () => {
    const { registry } = confinedRegistry();
    const answer = await registry.exec('s', { command: '(setsid sleep 3201 &); sleep 30', timeoutSeconds: 0 }, CONFIG, {
      confinement: tenantA,
    });
    expect(details(answer)).toMatchObject({ status: 'failed', timedOut: true });
    expect(answer.text).toContain('Command timed out after 2 seconds');
    await waitFor(() => processesMatching('sleep 3201').length === 0, 3000);
    await registry.shutdown();
  });

  it('refuses commands once the workspace is over its size limit, except a plain rm', async () => {
    const { registry } = confinedRegistry({ workspaceMaxBytes: 512 * 1024 });
    await registry.exec('s', { command: 'head -c 900000 /dev/urandom > fill' }, CONFIG, { confinement: tenantA });
    const refused = await registry.exec('s', { command: 'echo hi' }, CONFIG, { confinement: tenantA });
    expect(refused).toEqual({ text: 'workspace over its size limit (524288 bytes); remove files first.', details: { status: 'failed' } });
    const removed = await registry.exec('s', { command: 'rm -f fill' }, CONFIG, { confinement: tenantA });
    expect(details(removed).status).toBe('completed');
    expect((await registry.exec('s', { command: 'echo hi' }, CONFIG, { confinement: tenantA })).text).toBe('hi');
    await registry.shutdown();
  });

  it('gives pty:true a terminal inside the sandbox', async () => {
    const { registry } = confinedRegistry();
    const answer = await registry.exec('s', { command: 'tty', pty: true }, CONFIG, { confinement: tenantA });
    expect(answer.text).toMatch(/^\/dev\/pts\/\d+$/);
    const id = details(
      await registry.exec('s', { command: 'read line; echo "got $line"', pty: true, background: true }, CONFIG, { confinement: tenantA }),
    ).sessionId;
    await registry.process('s', { action: 'submit', sessionId: id }, CONFIG);
    const { text } = await pollUntilExit(registry, 's', id, 3000);
    expect(text).toContain('got');
    await registry.shutdown();
  });

  it('fails every command with the reason when confinement is required but unavailable', async () => {
    const { registry } = confinedRegistry();
    const answer = await registry.exec('s', { command: 'true' }, CONFIG, {
      confinement: { kind: 'unavailable', reason: 'bubblewrap is not installed (no /usr/bin/bwrap)' },
    });
    expect(answer).toEqual({
      text: 'shell sandbox unavailable: bubblewrap is not installed (no /usr/bin/bwrap)',
      details: { status: 'failed' },
    });
    await registry.shutdown();
  });

  it('resolves workdir inside /workspace and names /workspace, never the host path, when it is outside', async () => {
    const { registry, workspaceRoot } = confinedRegistry();
    const scratch = mkdtempSync(path.join(tmpdir(), 'outside-'));
    writeFileSync(path.join(scratch, 'f'), 'x');
    await registry.exec('s', { command: 'mkdir -p sub; ln -s / up' }, CONFIG, { confinement: tenantA });
    expect(details(await registry.exec('s', { command: 'pwd', workdir: 'sub' }, CONFIG, { confinement: tenantA }))).toMatchObject({
      cwd: '/workspace/sub',
      aggregated: '/workspace/sub',
    });
    expect(
      details(await registry.exec('s', { command: 'pwd', workdir: '/workspace/sub' }, CONFIG, { confinement: tenantA })),
    ).toMatchObject({ cwd: '/workspace/sub' });
    for (const workdir of [scratch, '..', 'up']) {
      const answer = await registry.exec('s', { command: 'pwd', workdir }, CONFIG, { confinement: tenantA });
      expect(answer.text).toBe(`workdir "${workdir}" is outside the workspace /workspace.`);
      expect(answer.text).not.toContain(workspaceRoot);
    }
    rmSync(scratch, { recursive: true, force: true });
    await registry.shutdown();
  });
});
