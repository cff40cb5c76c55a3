import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { WORKSPACE_MOUNT } from '@codemode/contracts';
import { signalProcessTree } from '../process-tree';
import { bwrapFds, bwrapInvocation, type SandboxIdentity, type SandboxSetup } from './bwrap-invocation';
import { prepareWorkspace } from './workspace-owner';

export type SandboxProbe = { ok: true } | { ok: false; reason: string };

/** A probe that hangs (a stuck mount, a frozen kernel call) counts as a failure after this long. */
const PROBE_TIMEOUT_MS = 10_000;

/**
 * Starts one sandbox exactly as commands will be started (same mounts, limits and identity) and
 * runs `true` in it. The worker does this at start: bubblewrap may be missing, or the kernel,
 * seccomp or AppArmor may refuse user namespaces, and the answer decides confinement (SPEC §10).
 */
export async function probeSandbox(setup: SandboxSetup, identity: SandboxIdentity | null): Promise<SandboxProbe> {
  if (!existsSync(setup.bwrapPath)) return { ok: false, reason: `bubblewrap is not installed (no ${setup.bwrapPath})` };
  if (!existsSync(setup.prlimitPath)) return { ok: false, reason: `util-linux prlimit is not installed (no ${setup.prlimitPath})` };
  const workspace = mkdtempSync(path.join(tmpdir(), 'codemode-sandbox-probe-'));
  try {
    await prepareWorkspace(workspace, identity);
    const invocation = bwrapInvocation(setup, {
      workspace,
      cwd: WORKSPACE_MOUNT,
      argv: ['/bin/sh', '-c', 'true'],
      env: { PATH: '/usr/bin:/bin' },
      cpuSeconds: 5,
    });
    return await run(invocation.file, invocation.args, invocation.env, identity, invocation.seccompFile);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

function run(
  file: string,
  args: string[],
  env: Record<string, string>,
  identity: SandboxIdentity | null,
  seccompFile: string | null,
): Promise<SandboxProbe> {
  return new Promise((resolve) => {
    const seccomp = seccompFile === null ? null : openSync(seccompFile, 'r');
    const child = spawn(file, args, { env, stdio: ['ignore', 'ignore', 'pipe', ...bwrapFds(seccomp)], ...(identity ?? {}) });
    if (seccomp !== null) closeSync(seccomp);
    (child.stdio[4] as Readable).resume();
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    // The whole tree: a sandbox still setting up has not yet asked to die with bubblewrap, and
    // would hold stderr open, so 'close' never came.
    const timer = setTimeout(() => signalProcessTree(child.pid!, 'SIGKILL'), PROBE_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ ok: false, reason: `bubblewrap could not start: ${err.message}` });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve({ ok: true });
      const said = stderr.trim().split('\n').pop()?.trim();
      resolve({ ok: false, reason: said || `bubblewrap exited with ${signal ?? `code ${code}`}` });
    });
  });
}
