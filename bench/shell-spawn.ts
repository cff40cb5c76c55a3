import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { bwrapFds, bwrapInvocation, writeSandboxEtc, type SandboxSetup } from '@codemode/shell';

/** The baseline for `shell/exec`: spawning `true` and waiting for it, in-process. */
export function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', 'true'], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', () => resolve());
  });
}

/**
 * The same `true` inside a bubblewrap sandbox built exactly as the worker builds one (namespaces,
 * mounts, rlimits, a tenant uid when run as root): the cost of confinement without the service.
 */
export class ConfinedSpawn {
  private readonly workspace = mkdtempSync(join(tmpdir(), 'bench-sandbox-'));
  private readonly setup: SandboxSetup = {
    bwrapPath: '/usr/bin/bwrap',
    prlimitPath: '/usr/bin/prlimit',
    etcDir: writeSandboxEtc(),
    limits: { maxProcesses: 256, memoryBytes: 1 << 30, maxFileBytes: 1 << 28, openFiles: 1024, tmpBytes: 64 << 20 },
  };

  run(): Promise<void> {
    const invocation = bwrapInvocation(this.setup, {
      workspace: this.workspace,
      cwd: '/workspace',
      argv: ['/bin/sh', '-c', 'true'],
      env: { PATH: '/usr/bin:/bin' },
      cpuSeconds: 10,
    });
    // As the worker does: bubblewrap reads the seccomp program from fd 3 and reports its sandbox on fd 4.
    const seccomp = invocation.seccompFile === null ? null : openSync(invocation.seccompFile, 'r');
    return new Promise((resolve, reject) => {
      const child = spawn(invocation.file, invocation.args, {
        env: invocation.env,
        stdio: ['ignore', 'ignore', 'ignore', ...bwrapFds(seccomp)],
      });
      if (seccomp !== null) closeSync(seccomp);
      (child.stdio[4] as Readable).resume();
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`bwrap exited ${code}`))));
    });
  }

  close(): void {
    rmSync(this.workspace, { recursive: true, force: true });
    rmSync(this.setup.etcDir, { recursive: true, force: true });
  }
}
