import { readdirSync, readFileSync } from 'node:fs';

interface ProcStat {
  pid: number;
  ppid: number;
  pgid: number;
  /** Tells the process apart from a later one given the same pid. */
  startTime: string;
}

/**
 * `/proc/<pid>/stat` fields 4, 5 and 22 (ppid, pgrp, starttime); the command name may hold spaces
 * and parens.
 */
function readStat(pid: string): ProcStat | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    return { pid: Number(pid), ppid: Number(fields[1]), pgid: Number(fields[2]), startTime: fields[19] };
  } catch {
    return undefined; // the process ended while we looked
  }
}

function snapshot(): ProcStat[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return []; // no procfs: callers fall back to signalling the group alone
  }
  const out: ProcStat[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(name);
    if (stat) out.push(stat);
  }
  return out;
}

let ownGroup: number | undefined;
function ownProcessGroup(): number {
  ownGroup ??= readStat('self')?.pgid ?? -1;
  return ownGroup;
}

/**
 * Sends `signal` to the process group led by `pid` and to every descendant's group.
 *
 * Why more than `kill(-pid)`: a pty child runs under `script`, which puts the command in a new
 * session (its own process group) so it can own the terminal; signalling only `script`'s group
 * would leave it behind. Descendants are collected before any signal, since killed children get
 * re-parented and vanish from the tree. The worker's own group is never signalled.
 */
export function signalProcessTree(pid: number, signal: NodeJS.Signals): void {
  const procs = snapshot();
  const children = new Map<number, ProcStat[]>();
  for (const p of procs) {
    const list = children.get(p.ppid) ?? [];
    list.push(p);
    children.set(p.ppid, list);
  }
  const groups = new Set<number>([pid]);
  const pids: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const current = queue.shift()!;
    for (const child of children.get(current) ?? []) {
      groups.add(child.pgid);
      pids.push(child.pid);
      queue.push(child.pid);
    }
  }
  const mine = ownProcessGroup();
  for (const group of groups) {
    if (group > 1 && group !== mine) trySignal(-group, signal);
  }
  for (const child of pids) trySignal(child, signal);
  trySignal(pid, signal);
}

/** The start time of `pid` if it is a child of `parent` now, else undefined. */
export function childStartTime(pid: number, parent: number): string | undefined {
  const stat = readStat(String(pid));
  return stat?.ppid === parent ? stat.startTime : undefined;
}

/** SIGKILLs `pid` if it is still the process that started at `startTime` (never one that took its pid since). */
export function killIfSame(pid: number, startTime: string): void {
  if (readStat(String(pid))?.startTime === startTime) trySignal(pid, 'SIGKILL');
}

/** Whether any process still belongs to process group `pgid`. */
export function groupAlive(pgid: number): boolean {
  return snapshot().some((p) => p.pgid === pgid);
}

/** Signals every member of process group `pgid` (never the worker's own group). */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  if (pgid > 1 && pgid !== ownProcessGroup()) trySignal(-pgid, signal);
}

function trySignal(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // ESRCH: already gone; EPERM: not ours to signal. Neither is worth failing a kill over.
  }
}
