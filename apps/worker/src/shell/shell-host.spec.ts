import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '@codemode/config';
import type { EventLog } from '@codemode/events';
import type { LeasedSlot, WorkerPresence } from '@codemode/fleet';
import { SHELL_TEXTS } from '@codemode/shell';
import type { Logger } from '@codemode/telemetry';
import type { NodeSurface } from '../nodes/node-surface';
import type { WorkerTenantLimits } from '../quotas/worker-tenant-limits.service';
import type { ShellConfinement } from './shell-confinement.service';
import type { ShellExitNotifier } from './shell-exit-notifier.service';
import { ShellHost } from './shell-host.service';

/**
 * A session DELETE that reaches this worker while an exec still waits for its quota slot (before
 * the registry sees the call): the command does not start in the deleted session's workspace. One
 * asked after the DELETE runs in the session made again, once the old folder is gone.
 */
describe('ShellHost and a session deleted while an exec starts', () => {
  let root: string;
  /** Shut down after each test, passed or not: no command of a failed test is left running. */
  const hosts: ShellHost[] = [];
  beforeEach(() => (root = mkdtempSync(path.join(tmpdir(), 'shell-host-spec-'))));
  afterEach(async () => {
    await Promise.all(hosts.splice(0).map((shell) => shell.onApplicationShutdown()));
    rmSync(root, { recursive: true, force: true });
  });

  function host(slotGiven: Promise<void>) {
    const released: string[] = [];
    const slot: LeasedSlot = { release: async () => void released.push('slot') } as LeasedSlot;
    const config = loadConfig({ CODEMODE_WORKSPACE_ROOT: root, PATH: '/usr/bin:/bin' });
    const shell = new ShellHost(
      config,
      { warn: () => undefined, info: () => undefined, debug: () => undefined, error: () => undefined } as unknown as Logger,
      undefined as never,
      { append: async () => undefined, history: async () => [] } as unknown as EventLog,
      { claimShellHome: async () => undefined, rememberShellSession: async () => undefined } as unknown as WorkerPresence,
      { setup: undefined, forTenant: async () => ({ kind: 'none' }) } as unknown as ShellConfinement,
      { shellSession: async () => slotGiven.then(() => slot) } as unknown as WorkerTenantLimits,
      {} as NodeSurface,
      { exited: () => undefined, stop: async () => undefined } as unknown as ShellExitNotifier,
    );
    hosts.push(shell);
    return { shell, released, defaults: config.shellDefaults };
  }

  it('refuses the command and gives the slot back', async () => {
    let giveSlot!: () => void;
    const { shell, released, defaults } = host(new Promise<void>((resolve) => (giveSlot = resolve)));
    const ref = { tenant: 'alpha', sessionId: 's1' };
    const answer = shell.exec({ ref, scopeKey: 's1' }, { command: 'echo ran > ran.txt' }, defaults);
    await shell.removeWorkspace(ref);
    giveSlot();
    expect(await answer).toEqual({ text: SHELL_TEXTS.sessionDeletedBeforeRun, details: { status: 'failed' } });
    expect(released).toEqual(['slot']);
    expect(existsSync(path.join(root, 'alpha', 's1', 'ran.txt'))).toBe(false);
  });

  it('runs a command asked after the deletion (the session made again)', async () => {
    const { shell, defaults } = host(Promise.resolve());
    const ref = { tenant: 'alpha', sessionId: 's2' };
    await shell.removeWorkspace(ref);
    const answer = await shell.exec({ ref, scopeKey: 's2' }, { command: 'echo ran' }, defaults);
    expect(answer.details).toMatchObject({ status: 'completed' });
    expect(answer.text).toBe('ran');
  });

  it('a command asked while the deleted workspace is still being removed waits, then runs in a fresh folder', async () => {
    const { shell, defaults } = host(Promise.resolve());
    const ref = { tenant: 'alpha', sessionId: 's3' };
    const workspace = path.join(root, 'alpha', 's3');
    // Ignores SIGTERM: the removal waits the whole grace before its SIGKILL, then removes the folder.
    const stubborn = await shell.exec({ ref, scopeKey: 's3' }, { command: "trap '' TERM; sleep 4121", background: true }, defaults);
    expect(stubborn.details).toMatchObject({ status: 'running' });
    const removed = shell.removeWorkspace(ref);
    const again = await shell.exec({ ref, scopeKey: 's3' }, { command: 'echo new > new.txt && cat new.txt' }, defaults);
    await removed;
    expect(again.text).toBe('new');
    expect(readFileSync(path.join(workspace, 'new.txt'), 'utf8')).toBe('new\n');
  });
});
