import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Answer, confinementTenants, lines } from './confinement-tenants';
import { sleep } from './tenancy-helpers';

/**
 * SPEC §10 "Fate isolation / Sandbox filesystems", adversarially (setup and leak check in
 * test/tenancy/confinement-tenants.ts): alpha tries to fill every writable filesystem of its
 * sandbox, to write past its workspace's size cap within one command and to create more entries
 * than its file cap, while beta's commands and cells go on and beta's workspace stays intact.
 */

jest.setTimeout(90_000);

const MiB = 1024 * 1024;
const WORKSPACE_MAX_BYTES = 64 * MiB;
const WORKSPACE_MAX_FILES = 2000;

describe('tenancy: sandbox filesystems are capped (SPEC §10)', () => {
  const tenants = confinementTenants({
    CODEMODE_WORKSPACE_MAX_BYTES: String(WORKSPACE_MAX_BYTES),
    CODEMODE_WORKSPACE_MAX_FILES: String(WORKSPACE_MAX_FILES),
    // Large single files and commands of several seconds, so the filesystems' own caps are what
    // stop the writes, not the file-size rlimit or the timeout.
    CODEMODE_SHELL_MAX_FILE_BYTES: String(256 * MiB),
    CODEMODE_SHELL_MAX_TIMEOUT_SECONDS: '30',
  });
  const { sh, proc, cell, betaUnaffectedAndNothingLeaked } = tenants;
  const workspaceOf = (tenant: string, sid: string) => join(tenants.stack.workspaceRoot, tenant, sid);

  /** Beta's work while alpha attacks: shell commands writing its own files, and cells. */
  const betaWorks = async (sid: string): Promise<void> => {
    for (let round = 0; round < 4; round += 1) {
      const [shell, result] = await Promise.all([
        sh('beta', sid, { command: `head -c 1048576 /dev/urandom > part${round}; ls | wc -l` }),
        cell('beta', `${sid}-cell`, `const r = await exec({ command: 'echo cell${round}' }); return r.details.aggregated;`),
      ]);
      expect(shell.details).toMatchObject({ status: 'completed', aggregated: String(round + 1) });
      expect(result).toMatchObject({ status: 'completed', value: `cell${round}` });
      await sleep(300);
    }
  };
  const betaIntact = (sid: string): void => {
    expect(readdirSync(workspaceOf('beta', sid)).sort()).toEqual(['part0', 'part1', 'part2', 'part3']);
    expect(readFileSync(join(workspaceOf('beta', 'vault'), 'secret.txt'), 'utf8')).toBe(tenants.canaries.betaFile);
  };

  /** Polls a background session until it is no longer running (at most `ms`); returns every poll's text and the last answer. */
  const untilEnded = async (sid: string, id: string, ms: number): Promise<{ text: string; last: Answer }> => {
    const until = Date.now() + ms;
    let text = '';
    for (;;) {
      const poll = await proc('alpha', sid, { action: 'poll', sessionId: id, timeout: 500 });
      text += `${poll.text}\n`;
      if (poll.details.status !== 'running' || Date.now() > until) return { text, last: poll };
    }
  };

  it('/dev is read-only, and /dev/shm and /tmp hold at most 64 MiB each, fresh per command', async () => {
    const [answer] = await Promise.all([
      sh('alpha', 'fill', {
        command: [
          'dd if=/dev/zero of=/dev/shm/big bs=1M count=100 status=none; echo "shm rc=$? $(stat -c %s /dev/shm/big)"',
          'dd if=/dev/zero of=/tmp/big bs=1M count=100 status=none; echo "tmp rc=$? $(stat -c %s /tmp/big)"',
          'dd if=/dev/zero of=/dev/big bs=1M count=100 status=none; echo "dev rc=$?"',
          'mkdir /dev/sub; echo "devdir rc=$?"',
        ].join('; '),
      }),
      betaWorks('fill-beta'),
    ]);
    const out = String(answer.details.aggregated);
    expect(out).toMatch(/error writing .\/dev\/shm\/big.: No space left on device/);
    expect(out).toMatch(/error writing .\/tmp\/big.: No space left on device/);
    expect(out).toMatch(/failed to open .\/dev\/big.: Read-only file system/);
    expect(out).toMatch(/cannot create directory .\/dev\/sub.: Read-only file system/);
    const shm = /^shm rc=(\d+) (\d+)$/m.exec(out);
    const tmp = /^tmp rc=(\d+) (\d+)$/m.exec(out);
    expect(Number(shm?.[1])).toBeGreaterThan(0);
    expect(Number(shm?.[2])).toBeLessThanOrEqual(64 * MiB);
    expect(Number(tmp?.[1])).toBeGreaterThan(0);
    expect(Number(tmp?.[2])).toBeLessThanOrEqual(64 * MiB);
    expect(out).toMatch(/^dev rc=[1-9]\d*$/m);
    expect(out).toMatch(/^devdir rc=[1-9]\d*$/m);
    // Nothing of the last command's /dev/shm or /tmp is left for the next.
    const next = await sh('alpha', 'fill', { command: 'ls -A /dev/shm /tmp | grep -c big; df -B1 --output=used /dev/shm | tail -n 1' });
    expect(lines(next.details.aggregated).map((l) => l.trim())).toEqual(['0', '0']);
    betaIntact('fill-beta');
    await betaUnaffectedAndNothingLeaked();
  });

  it('a command writing past CODEMODE_WORKSPACE_MAX_BYTES is stopped within about a second; the next call is refused', async () => {
    // 4 MiB every 100 ms: passes 64 MiB with the 17th chunk (about 1.7 s in); unstopped it would
    // write 160 MiB over 4 s. A loaded machine writes slower, so the counts below hold under load.
    const [answer] = await Promise.all([
      sh('alpha', 'disk', {
        command: 'for i in $(seq 40); do head -c 4194304 /dev/zero > chunk$i; sleep 0.1; done; echo finished',
        yieldMs: 20_000,
      }),
      betaWorks('disk-beta'),
    ]);
    expect(answer).toMatchObject({
      text: `(no output)\n\nworkspace over its size limit (${WORKSPACE_MAX_BYTES} bytes); the command was stopped.`,
      details: { status: 'failed', exitSignal: 'SIGKILL' },
    });
    // At most about a second of writing (10 chunks) past the 17th.
    const chunks = readdirSync(workspaceOf('alpha', 'disk')).length;
    expect(chunks).toBeGreaterThanOrEqual(17);
    expect(chunks).toBeLessThanOrEqual(30);
    expect(await sh('alpha', 'disk', { command: 'echo next' })).toEqual({
      text: `workspace over its size limit (${WORKSPACE_MAX_BYTES} bytes); remove files first.`,
      details: { status: 'failed' },
    });
    expect((await sh('alpha', 'disk', { command: 'rm -f chunk*' })).details).toMatchObject({ status: 'completed' });
    expect((await sh('alpha', 'disk', { command: 'echo back' })).details).toMatchObject({ status: 'completed', aggregated: 'back' });
    betaIntact('disk-beta');
    await betaUnaffectedAndNothingLeaked();
  });

  it('a background pty session creating past CODEMODE_WORKSPACE_MAX_FILES is stopped; the next call is refused', async () => {
    // About 100 entries every 60 ms: past 2,000 after about 1.2 s; unstopped it would make 10,000.
    const started = await sh('alpha', 'inodes', {
      command: 'mkdir d && cd d && for i in $(seq 100); do for j in $(seq 100); do : > f$i-$j; done; sleep 0.05; done; echo finished',
      background: true,
      pty: true,
    });
    expect(started.details).toMatchObject({ status: 'running' });
    const [{ text, last }] = await Promise.all([untilEnded('inodes', String(started.details.sessionId), 30_000), betaWorks('inodes-beta')]);
    const stopped = `workspace over its file limit (${WORKSPACE_MAX_FILES} files); the command was stopped.`;
    expect(last.details).toMatchObject({ status: 'failed', exitSignal: 'SIGKILL' });
    expect(text.trimEnd().endsWith(`Process exited with signal SIGKILL.\n\n${stopped}`)).toBe(true);
    // Entries the limit counts: the files in d, and d itself.
    const entries = readdirSync(join(workspaceOf('alpha', 'inodes'), 'd')).length + 1;
    expect(entries).toBeGreaterThan(WORKSPACE_MAX_FILES);
    expect(entries).toBeLessThan(8000);
    const refused = `workspace over its file limit (${WORKSPACE_MAX_FILES} files); remove files first.`;
    expect(await sh('alpha', 'inodes', { command: 'echo next' })).toEqual({ text: refused, details: { status: 'failed' } });
    const inCell = await cell('alpha', 'inodes', "const r = await exec({ command: 'echo from-cell' }); return r.text;");
    expect(inCell).toMatchObject({ status: 'completed', value: refused });
    expect((await sh('alpha', 'inodes', { command: 'rm -rf d' })).details).toMatchObject({ status: 'completed' });
    expect((await sh('alpha', 'inodes', { command: 'echo back' })).details).toMatchObject({ status: 'completed', aggregated: 'back' });
    betaIntact('inodes-beta');
    await betaUnaffectedAndNothingLeaked();
  });
});
