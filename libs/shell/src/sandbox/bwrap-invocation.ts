import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { WORKSPACE_MOUNT } from '@codemode/contracts';
import { SECCOMP_FILE } from './sandbox-etc';

/** Per-command caps of SPEC §10, applied as rlimits inside the sandbox and as the `/tmp` size. */
export interface SandboxLimits {
  /** RLIMIT_NPROC of the command's own user namespace: counts this sandbox's processes only. */
  readonly maxProcesses: number;
  /** RLIMIT_AS of every process in the sandbox. */
  readonly memoryBytes: number;
  /** RLIMIT_FSIZE: the largest file a command may write. */
  readonly maxFileBytes: number;
  /** RLIMIT_NOFILE. */
  readonly openFiles: number;
  /** Size of the sandbox's private `/tmp` tmpfs, and of its `/dev/shm`. */
  readonly tmpBytes: number;
}

/** Host uid/gid a sandbox starts under (one per tenant); absent when the worker is not root. */
export interface SandboxIdentity {
  readonly uid: number;
  readonly gid: number;
}

/** What every sandbox of this worker shares: tool paths, the minimal `/etc`, and the caps. */
export interface SandboxSetup {
  readonly bwrapPath: string;
  readonly prlimitPath: string;
  /** Folder holding the generated `passwd`, `group` and `hosts` (see `writeSandboxEtc`). */
  readonly etcDir: string;
  readonly limits: SandboxLimits;
}

/** One command to run confined. */
export interface SandboxedCommand {
  /** Host path of the session workspace, bound read-write at `/workspace`. */
  readonly workspace: string;
  /** Working directory inside the sandbox (under `/workspace`). */
  readonly cwd: string;
  /** The program and its arguments, e.g. `/bin/bash --norc --noprofile -c <command>`. */
  readonly argv: readonly string[];
  /** The command's complete environment inside the sandbox. */
  readonly env: Readonly<Record<string, string>>;
  /** RLIMIT_CPU: the command's timeout, so a detached busy loop cannot outlive it on CPU. */
  readonly cpuSeconds: number;
}

/** How to start bubblewrap for one command: `spawn(file, args, { env, uid, gid })`. */
export interface BwrapInvocation {
  readonly file: string;
  readonly args: string[];
  /**
   * bubblewrap's own environment. Its init stays pid 1 inside, and `/proc/1/environ` shows what
   * bubblewrap was started with, so it gets nothing but these fixed, secret-free values; the
   * command's environment is set with `--setenv` after `--clearenv`.
   */
  readonly env: Record<string, string>;
  /** The seccomp program bubblewrap reads from fd 3 (`--seccomp 3`): open it and pass it as `stdio[3]`. */
  readonly seccompFile: string | null;
}

/** The fd bubblewrap reads the seccomp program from. */
const SECCOMP_FD = 3;
/**
 * The fd bubblewrap writes its sandbox's first process to (`--info-fd`, `"child-pid": <host pid>`)
 * before that process sets the sandbox up: pass a pipe as `stdio[4]`.
 */
export const SANDBOX_INFO_FD = 4;

/**
 * `stdio[3]` and `stdio[4]` of a spawned bubblewrap: the opened seccomp program (nothing without
 * one) and the pipe `--info-fd` writes to, which the caller reads or drains.
 */
export function bwrapFds(seccomp: number | null): [number | 'ignore', 'pipe'] {
  return [seccomp ?? 'ignore', 'pipe'];
}

/** The uid and gid commands see inside (mapped to the tenant's host uid); never 0. */
const INNER_ID = '1000';
/** Host `/etc` entries programs need and that hold no secrets: alternatives (awk), the loader cache, zones, terminals. */
const ETC_PASSTHROUGH = ['alternatives', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'localtime', 'terminfo', 'inputrc', 'mime.types'];
/** Top-level system folders of a merged-/usr or classic layout, bound read-only or linked as on the host. */
const SYSTEM_TOP = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

let systemMountsCache: string[] | undefined;

/** `/usr` read-only, and `/bin`, `/lib*` as the host has them (symlinks into /usr, or folders). */
function systemMounts(): string[] {
  if (systemMountsCache) return systemMountsCache;
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const top of SYSTEM_TOP) {
    if (!existsSync(top)) continue;
    if (lstatSync(top).isSymbolicLink()) args.push('--symlink', readlinkSync(top), top);
    else args.push('--ro-bind', top, top);
  }
  for (const name of ETC_PASSTHROUGH) args.push('--ro-bind-try', `/etc/${name}`, `/etc/${name}`);
  systemMountsCache = args;
  return args;
}

/**
 * The bubblewrap command line for one shell command (SPEC §10 "Shell confinement"):
 * - every namespace of its own (user, pid, mount, ipc, uts, network, cgroup), so it sees only its
 *   own processes and a loopback-only network, and `--disable-userns` so it cannot nest another;
 * - `--die-with-parent` and pid 1 inside: once bubblewrap ends, the kernel ends every process of
 *   the sandbox, whatever it did to detach (`setsid`, double fork). The sandbox's pid 1 asks for
 *   that only once it is set up, so the spawner also kills it by the pid `--info-fd` reports;
 * - the workspace as the only writable path besides a size-capped `/tmp` and `/dev/shm`; `/usr`,
 *   a minimal `/etc`, `/dev` and the root itself read-only; fresh `/proc` and `/dev`;
 * - a seccomp program that refuses `fallocate` and io_uring (see `sandboxSeccompProgram`);
 * - `prlimit` as the first program inside: the process cap counts in the sandbox's own user
 *   namespace (so it is per command, and one tenant at its cap cannot stop another's commands),
 *   and the other caps hold for every process the command starts.
 */
export function bwrapInvocation(setup: SandboxSetup, command: SandboxedCommand): BwrapInvocation {
  const { limits } = setup;
  const args = [
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--info-fd',
    String(SANDBOX_INFO_FD),
    '--new-session',
    '--uid',
    INNER_ID,
    '--gid',
    INNER_ID,
    '--hostname',
    'sandbox',
    ...systemMounts(),
    '--ro-bind',
    `${setup.etcDir}/passwd`,
    '/etc/passwd',
    '--ro-bind',
    `${setup.etcDir}/group`,
    '/etc/group',
    '--ro-bind',
    `${setup.etcDir}/hosts`,
    '/etc/hosts',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    // bubblewrap's `/dev` is an uncapped tmpfs (a share of the host's memory): it gets its own
    // capped `/dev/shm` and is then read-only; device nodes stay writable on a read-only mount.
    '--size',
    String(limits.tmpBytes),
    '--tmpfs',
    '/dev/shm',
    '--remount-ro',
    '/dev',
    '--size',
    String(limits.tmpBytes),
    '--tmpfs',
    '/tmp',
    '--bind',
    command.workspace,
    WORKSPACE_MOUNT,
    // The sandbox's root is a tmpfs bubblewrap made; read-only, it cannot become uncapped storage.
    '--remount-ro',
    '/',
    '--chdir',
    command.cwd,
    '--clearenv',
  ];
  for (const [name, value] of Object.entries(command.env)) args.push('--setenv', name, value);
  const seccompFile = path.join(setup.etcDir, SECCOMP_FILE);
  const seccomp = existsSync(seccompFile);
  if (seccomp) args.push('--seccomp', String(SECCOMP_FD));
  args.push(
    setup.prlimitPath,
    `--nproc=${limits.maxProcesses}`,
    `--as=${limits.memoryBytes}`,
    `--fsize=${limits.maxFileBytes}`,
    `--nofile=${limits.openFiles}`,
    `--cpu=${Math.max(1, command.cpuSeconds)}`,
    '--',
    ...command.argv,
  );
  return { file: setup.bwrapPath, args, env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' }, seccompFile: seccomp ? seccompFile : null };
}
