import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { TestStack } from '../test/utils/test-stack';
import { fmt, measureThroughput } from './stats';

/** One line of a process's profile: a function and the CPU it spent itself, per exec. */
export interface ProfileLine {
  fn: string;
  where: string;
  selfMsPerExec: number;
  share: number;
}

export interface ProcessProfile {
  role: string;
  /** Sampled CPU per exec, every thread of the process (idle left out). */
  msPerExec: number;
  top: ProfileLine[];
}

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const ROOT = join(__dirname, '..', '..');
const TOP = 12;

/**
 * Where an exec's CPU goes (issue 41 item 5): a real api and worker run with V8's sampling profiler
 * (`--cpu-prof`, every thread: the sandbox threads write profiles of their own), and each
 * function's self time is summed per process over its threads. The profiles cover a process's
 * whole life, start-up included, so the same is done twice — start, `WARM_UP` execs, stop; and
 * start, `WARM_UP` execs, `execs` trivial execs at `inFlight`, stop — and the first is taken off
 * the second, function by function. The profiler itself costs some CPU, so the per-exec figures run
 * above the unprofiled ones of the ratio table; the shares are what to read.
 */
export async function measureProfile(execs: number, inFlight: number): Promise<ProcessProfile[]> {
  const base = await profiledRun(0, inFlight);
  const full = await profiledRun(execs, inFlight);
  return ['api', 'worker'].map((role) => summarise(role, full.get(role) ?? new Map(), base.get(role) ?? new Map(), execs));
}

const WARM_UP = 100;

/** Self µs per function (`name@where`) of each process over one profiled stack's life. */
async function profiledRun(execs: number, inFlight: number): Promise<Map<string, Map<string, number>>> {
  const dir = mkdtempSync(join(tmpdir(), 'codemode-cpu-prof-'));
  const stack = await TestStack.start({ workers: 1, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
  const roles = new Map([
    [stack.api.pid, 'api'],
    [stack.workers[0].pid, 'worker'],
  ]);
  const client = stack.client();
  const exec = async (): Promise<void> => {
    const result = await client.exec('profile', { title: 'add', code: 'return 1+1' });
    if (result.status !== 'completed') throw new Error(`unexpected result ${JSON.stringify(result)}`);
  };
  try {
    for (let i = 0; i < WARM_UP; i += 1) await exec();
    if (execs > 0) await measureThroughput(execs, inFlight, exec);
  } finally {
    // A graceful stop: each process writes its profiles as it exits.
    await stack.stop();
  }
  const byRole = new Map<string, Map<string, number>>();
  for (const file of readdirSync(dir)) {
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile
    const role = roles.get(Number(file.split('.')[3]));
    if (!role) continue;
    const self = byRole.get(role) ?? new Map<string, number>();
    addSelfTimes(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile, self);
    byRole.set(role, self);
  }
  rmSync(dir, { recursive: true, force: true });
  return byRole;
}

function addSelfTimes(profile: CpuProfile, self: Map<string, number>): void {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  for (const [i, id] of profile.samples.entries()) {
    const frame = nodes.get(id)?.callFrame;
    if (!frame || frame.functionName === '(idle)') continue;
    const where = frame.url ? `${shortPath(frame.url)}:${frame.lineNumber + 1}` : '';
    const key = `${frame.functionName || '(anonymous)'}@${where}`;
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
}

function summarise(role: string, full: Map<string, number>, base: Map<string, number>, execs: number): ProcessProfile {
  const lines = [...full.entries()].map(([key, us]) => {
    const at = key.indexOf('@');
    return { fn: key.slice(0, at), where: key.slice(at + 1), us: us - (base.get(key) ?? 0) };
  });
  const busyUs =
    lines.reduce((sum, line) => sum + line.us, 0) -
    [...base.entries()].filter(([key]) => !full.has(key)).reduce((sum, [, us]) => sum + us, 0);
  const top = lines
    .sort((a, b) => b.us - a.us)
    .slice(0, TOP)
    .map((line) => ({ fn: line.fn, where: line.where, selfMsPerExec: line.us / 1000 / execs, share: busyUs <= 0 ? 0 : line.us / busyUs }));
  return { role, msPerExec: busyUs / 1000 / execs, top };
}

function shortPath(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const modules = path.lastIndexOf('node_modules/');
  if (modules >= 0) return path.slice(modules + 'node_modules/'.length);
  return path.startsWith('/') ? relative(ROOT, path) : path;
}

export function profileTable(profiles: ProcessProfile[], execs: number, inFlight: number): string {
  const header = [
    `| top functions by self time (${execs} trivial execs at ${inFlight} in flight, \`--cpu-prof\`, all threads, start-up and warm-up taken off) | where | ms per exec | share of the process |`,
    '|---|---|---|---|',
  ];
  const rows = profiles.flatMap((p) => [
    `| **${p.role}: all sampled CPU** | | **${fmt(p.msPerExec, 3)}** | 100 % |`,
    ...p.top.map((line) => `| ${line.fn} | ${line.where || '—'} | ${fmt(line.selfMsPerExec, 3)} | ${fmt(line.share * 100, 1)} % |`),
  ]);
  return [...header, ...rows].join('\n');
}
