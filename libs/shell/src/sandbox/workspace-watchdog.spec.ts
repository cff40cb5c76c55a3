import { readdirSync, rmSync } from 'node:fs';
import { CONFIG, details, makeRegistry, pollUntilExit } from '../test-support';
import type { SandboxSetup } from './bwrap-invocation';
import type { Confinement } from './confinement';
import { writeSandboxEtc } from './sandbox-etc';

/**
 * The workspace limits held while commands run (SPEC §10 "Sandbox filesystems"), with real
 * bubblewrap and real processes: a command that writes or creates past a limit is stopped with
 * the limit's message, the next call is refused until files are removed, and a plain `rm` always
 * runs.
 */
const etcDir = writeSandboxEtc();
const setup: SandboxSetup = {
  bwrapPath: '/usr/bin/bwrap',
  prlimitPath: '/usr/bin/prlimit',
  etcDir,
  limits: { maxProcesses: 64, memoryBytes: 256 * 1024 * 1024, maxFileBytes: 4 * 1024 * 1024, openFiles: 1024, tmpBytes: 8 * 1024 * 1024 },
};
const confinement: Confinement = { kind: 'bwrap', identity: process.getuid?.() === 0 ? { uid: 231_011, gid: 231_011 } : null };
const MAX_BYTES = 8 * 1024 * 1024;
const MAX_FILES = 500;

function limitedRegistry() {
  return makeRegistry({
    sandbox: setup,
    baseEnv: { PATH: '/usr/bin:/bin' },
    maxTimeoutSeconds: 60,
    workspaceMaxBytes: MAX_BYTES,
    workspaceMaxFiles: MAX_FILES,
  });
}

afterAll(() => rmSync(etcDir, { recursive: true, force: true }));

describe('workspace limits while a command runs', () => {
  it('stops a command that writes past the size limit within a second, then refuses until files are removed', async () => {
    const { registry, workspaceRoot } = limitedRegistry();
    // 1 MiB every 50 ms: past 8 MiB after about 0.4 s; unstopped it would write 40 MiB over 2 s.
    const started = Date.now();
    const answer = await registry.exec(
      's',
      { command: 'for i in $(seq 40); do head -c 1048576 /dev/zero > f$i; sleep 0.05; done; echo finished', yieldMs: 20_000 },
      CONFIG,
      { confinement },
    );
    const elapsedMs = Date.now() - started;
    expect(details(answer)).toMatchObject({ status: 'failed' });
    expect(answer.text).toBe(`(no output)\n\nworkspace over its size limit (${MAX_BYTES} bytes); the command was stopped.`);
    // Stopped well short of the 40 files it meant to write: at most about a second of writing
    // past the 9th file (a loaded machine writes slower, so the count holds under load too).
    expect(readdirSync(workspaceRoot).length).toBeLessThan(25);
    expect(elapsedMs).toBeLessThan(5000);
    expect(await registry.exec('s', { command: 'echo hi' }, CONFIG, { confinement })).toEqual({
      text: `workspace over its size limit (${MAX_BYTES} bytes); remove files first.`,
      details: { status: 'failed' },
    });
    expect(details(await registry.exec('s', { command: 'rm -f f*' }, CONFIG, { confinement })).status).toBe('completed');
    expect((await registry.exec('s', { command: 'echo hi' }, CONFIG, { confinement })).text).toBe('hi');
    await registry.shutdown();
  });

  it('stops a background session that creates past the file limit; poll and log say why', async () => {
    const { registry } = limitedRegistry();
    const id = details(
      await registry.exec('s', { command: 'mkdir d; cd d; for i in $(seq 5000); do : > f$i; done; sleep 30', background: true }, CONFIG, {
        confinement,
      }),
    ).sessionId;
    const { text, answer } = await pollUntilExit(registry, 's', id, 10_000);
    const stopped = `workspace over its file limit (${MAX_FILES} files); the command was stopped.`;
    expect(details(answer).status).toBe('failed');
    expect(text.trimEnd().endsWith(`Process exited with signal SIGKILL.\n\n${stopped}`)).toBe(true);
    expect((await registry.process('s', { action: 'log', sessionId: id }, CONFIG)).text).toBe(stopped);
    expect((await registry.exec('s', { command: 'true' }, CONFIG, { confinement })).text).toBe(
      `workspace over its file limit (${MAX_FILES} files); remove files first.`,
    );
    expect(details(await registry.exec('s', { command: 'rm -rf d' }, CONFIG, { confinement })).status).toBe('completed');
    expect((await registry.exec('s', { command: 'echo back' }, CONFIG, { confinement })).text).toBe('back');
    await registry.shutdown();
  });

  it('counts files a command removed but keeps open', async () => {
    const { registry, workspaceRoot } = limitedRegistry();
    // 9 MiB in three removed files (each under the 4 MiB file cap), out of any walk's sight.
    const answer = await registry.exec(
      's',
      {
        command:
          'exec 3>h3 4>h4 5>h5; rm h3 h4 h5; for fd in 3 4 5; do for i in 1 2 3; do head -c 1048576 /dev/zero >&$fd; sleep 0.05; done; done; sleep 20',
        yieldMs: 20_000,
      },
      CONFIG,
      { confinement },
    );
    expect(answer.text).toBe(`(no output)\n\nworkspace over its size limit (${MAX_BYTES} bytes); the command was stopped.`);
    expect(readdirSync(workspaceRoot)).toEqual([]);
    // Closed with the command, the files are gone and the workspace is under again.
    expect((await registry.exec('s', { command: 'echo hi' }, CONFIG, { confinement })).text).toBe('hi');
    await registry.shutdown();
  });

  it('leaves commands under both limits alone', async () => {
    const { registry } = limitedRegistry();
    const answer = await registry.exec(
      's',
      { command: 'for i in $(seq 100); do : > g$i; done; head -c 3000000 /dev/zero > h; sleep 1; echo done' },
      CONFIG,
      { confinement },
    );
    expect(details(answer)).toMatchObject({ status: 'completed', aggregated: 'done' });
    await registry.shutdown();
  });
});
