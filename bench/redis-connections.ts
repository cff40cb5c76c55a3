import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** A process whose Redis connections a measure attributes to it (its child processes included). */
export interface NamedProcess {
  role: string;
  pid: number;
}

/**
 * Who holds which connection to the Redis on `port`, and how many TCP data segments each
 * connection has sent to it. Read from the kernel with `ss` (loopback only): Redis 7.0 keeps no
 * per-client command or read counters (`CLIENT LIST` has none), but each connection's
 * `data_segs_in` on Redis's side counts the client's socket writes that carried data — one per
 * write on loopback for writes under the segment size (64 KiB), which every command of a
 * trivial exec is. Redis reads a connection's pending segments in one read when it is slower
 * than the client, so segments are an upper bound on that connection's socket reads; the total
 * is held against INFO's `total_reads_processed` where both are reported.
 */
export class RedisConnections {
  constructor(
    private readonly port: number,
    private readonly processes: NamedProcess[],
  ) {}

  /** Client port → role, for every connection open now whose owner is known; `other` for the rest. */
  owners(): Map<number, string> {
    const owners = new Map<number, string>();
    for (const { local, users } of sockets(['-tnpH', 'state', 'established', `( dport = :${this.port} )`])) {
      const pid = Number(/pid=(\d+)/.exec(users)?.[1] ?? -1);
      owners.set(portOf(local), this.roleOf(pid));
    }
    return owners;
  }

  /** Data segments received by Redis so far, per client port, over the connections open now. */
  segments(): Map<number, number> {
    const segments = new Map<number, number>();
    for (const { peer, info } of sockets(['-tinH', 'state', 'established', `( sport = :${this.port} )`])) {
      segments.set(portOf(peer), Number(/data_segs_in:(\d+)/.exec(info)?.[1] ?? 0));
    }
    return segments;
  }

  private roleOf(pid: number): string {
    // A connection opened by a child process counts for the process that started it.
    for (let p = pid, hops = 0; p > 1 && hops < 8; p = parentOf(p), hops += 1) {
      const known = this.processes.find((process) => process.pid === p);
      if (known) return known.role;
    }
    return 'other';
  }
}

/** Per role, the segments sent between two readings (a connection opened in between counts from 0). */
export function segmentsByRole(before: Map<number, number>, after: Map<number, number>, owners: Map<number, string>): Map<string, number> {
  const byRole = new Map<string, number>();
  for (const [port, count] of after) {
    const role = owners.get(port) ?? 'other';
    byRole.set(role, (byRole.get(role) ?? 0) + count - (before.get(port) ?? 0));
  }
  return byRole;
}

function sockets(args: string[]): { local: string; peer: string; users: string; info: string }[] {
  const lines = execFileSync('ss', args, { encoding: 'utf8' }).split('\n');
  const rows: { local: string; peer: string; users: string; info: string }[] = [];
  for (const line of lines) {
    if (line.trim() === '') continue;
    if (/^\s/.test(line) && rows.length > 0) {
      rows[rows.length - 1].info += line;
      continue;
    }
    const [, , local = '', peer = '', ...rest] = line.trim().split(/\s+/);
    rows.push({ local, peer, users: rest.join(' '), info: '' });
  }
  return rows;
}

function portOf(address: string): number {
  return Number(address.slice(address.lastIndexOf(':') + 1));
}

function parentOf(pid: number): number {
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces, so read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return -1;
  }
}
