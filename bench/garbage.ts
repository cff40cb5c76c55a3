import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodeModeClient } from '@codemode/client';
import type { AppProcess } from '../test/utils/app-process';
import { REDIS_URL } from '../test/utils/test-stack';
import { processCpuMs } from './cpu-usage';
import { GcTrace, gcBetween, gcTotal, type IsolateGc } from './gc-trace';
import { RedisConnections, segmentsByRole } from './redis-connections';
import { profileTop, type ProfileTop, type SamplingHeapProfile } from './heap-profile-top';
import { startMultiTenantStack, TENANTS } from './scale-out';
import { fmt, measureThroughput } from './stats';

/** Issue 41's load, at the in-flight count its item 2 names: trivial execs, multi-tenant. */
const IN_FLIGHT = 32;
const SESSIONS = 64;
const WARM_UP_EXECS = 600;
const TOP_ALLOCATORS = 12;

/** The collector's work in one process over the measured execs. */
export interface ProcessGarbage {
  /** Process CPU (user + system, every thread), ms. */
  cpuMs: number;
  /** Socket writes to Redis that carried data (what auto-pipelining saves), from the kernel. */
  redisWrites: number;
  /** The main thread's isolate. */
  main: IsolateGc;
  /** Every other isolate summed: the worker's sandbox threads. */
  threads: IsolateGc;
  /** The sampling heap profile of the main thread, when one was asked for. */
  profile?: ProfileTop;
}

export interface GarbageReport {
  execs: number;
  throughput: number;
  api: ProcessGarbage;
  worker: ProcessGarbage;
}

/**
 * Runs `execs` trivial execs (`return 1+1`) at IN_FLIGHT over 4 tenants and SESSIONS sessions,
 * after a warm-up, against a real api and worker with `--trace-gc-nvp` on (bench/garbage-preload.ts),
 * and sums what V8 reports for each collection in each process over that window (see GcTrace).
 * With `profileDir`, both processes also sample their main thread's allocations over the same
 * window (the profiler's own cost lands in the numbers then).
 */
export async function measureGarbage(execs: number, profileDir?: string): Promise<GarbageReport> {
  const stack = await startMultiTenantStack(
    {},
    {
      // The level a deployment runs at: what is logged per exec, and what is built only to be dropped.
      LOG_LEVEL: 'info',
      NODE_OPTIONS: `--require ${join(__dirname, 'garbage-preload.js')}`,
      ...(profileDir ? { GARBAGE_PROFILE_DIR: profileDir } : {}),
    },
  );
  try {
    const processes = { api: stack.api, worker: stack.workers[0] };
    const traces = { api: new GcTrace(stack.api.child.stdout!), worker: new GcTrace(stack.workers[0].child.stdout!) };
    const clients = TENANTS.map((tenant) => new CodeModeClient({ baseUrl: stack.baseUrl, apiKey: `key-${tenant}` }));
    let n = 0;
    const exec = async (): Promise<void> => {
      const i = n++;
      const result = await clients[i % TENANTS.length].exec(`garbage-${i % SESSIONS}`, { title: 'add', code: 'return 1+1' });
      if (result.status !== 'completed' || result.value !== 2) throw new Error(`garbage bench exec: ${JSON.stringify(result)}`);
    };
    await measureThroughput(WARM_UP_EXECS, IN_FLIGHT, exec);
    const gcBefore = { api: traces.api.snapshot(), worker: traces.worker.snapshot() };
    const cpuBefore = { api: processCpuMs(stack.api.pid), worker: processCpuMs(stack.workers[0].pid) };
    const connections = new RedisConnections(Number(new URL(REDIS_URL).port || 6379), [
      { role: 'api', pid: stack.api.pid },
      { role: 'worker', pid: stack.workers[0].pid },
    ]);
    const segmentsBefore = connections.segments();
    if (profileDir) for (const app of Object.values(processes)) app.child.kill('SIGUSR2');
    const throughput = await measureThroughput(execs, IN_FLIGHT, exec);
    if (profileDir) for (const app of Object.values(processes)) app.child.kill('SIGUSR2');
    // The lines of collections that ran up to now are in the pipe; let them arrive.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const writes = segmentsByRole(segmentsBefore, connections.segments(), connections.owners());
    const per = async (role: keyof typeof processes): Promise<ProcessGarbage> => {
      const gc = gcBetween(gcBefore[role], traces[role].snapshot());
      const main = traces[role].mainIsolate();
      return {
        cpuMs: processCpuMs(processes[role].pid) - cpuBefore[role],
        redisWrites: writes.get(role) ?? 0,
        main: gcTotal([...gc].filter(([address]) => address === main).map(([, isolate]) => isolate)),
        threads: gcTotal([...gc].filter(([address]) => address !== main).map(([, isolate]) => isolate)),
        profile: profileDir ? profileTop(await readProfile(profileDir, processes[role]), TOP_ALLOCATORS) : undefined,
      };
    };
    return { execs, throughput, api: await per('api'), worker: await per('worker') };
  } finally {
    await stack.stop();
  }
}

/** The profile the preload writes once told to stop (it takes a moment). */
async function readProfile(dir: string, app: AppProcess): Promise<SamplingHeapProfile> {
  const path = join(dir, `${app.pid}.heapprofile`);
  const until = Date.now() + 30_000;
  while (!existsSync(path)) {
    if (Date.now() > until) throw new Error(`no heap profile from the ${app.role} at ${path}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await new Promise((resolve) => setTimeout(resolve, 200)); // the file is written in one call; let it finish
  return JSON.parse(readFileSync(path, 'utf8')) as SamplingHeapProfile;
}

/** A fresh folder for the heap profiles, or `keep` when the caller names one to keep them in. */
export function profileFolder(keep?: string): { dir: string; cleanup: () => void } {
  if (keep) {
    mkdirSync(keep, { recursive: true });
    return { dir: keep, cleanup: () => undefined };
  }
  const dir = mkdtempSync(join(tmpdir(), 'garbage-profile-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function garbageTable(report: GarbageReport): string {
  const e = report.execs;
  const isolates = [report.api.main, report.worker.main, report.worker.threads];
  const row = (name: string, cell: (gc: IsolateGc) => string): string => `| ${name} | ${isolates.map(cell).join(' | ')} |`;
  const lines = [
    `| per exec (${e} execs \`return 1+1\`, ${IN_FLIGHT} in flight, 4 tenants; ${fmt(report.throughput, 0)}/s) | api | worker: main thread | worker: sandbox threads |`,
    '|---|---|---|---|',
    `| process CPU, every thread (ms) | ${fmt(report.api.cpuMs / e, 3)} | ${fmt(report.worker.cpuMs / e, 3)} (whole process) | — |`,
    `| socket writes to Redis (data segments, \`ss\`) | ${fmt(report.api.redisWrites / e, 1)} | ${fmt(report.worker.redisWrites / e, 1)} (whole process) | — |`,
    row('GC on the thread itself: pauses + incremental marking (ms)', (gc) => fmt(gc.mainMs / e, 3)),
    row("GC on V8's helper threads (ms)", (gc) => fmt(gc.backgroundMs / e, 3)),
    row('GC in all (ms)', (gc) => fmt((gc.mainMs + gc.backgroundMs) / e, 3)),
    row('allocated (KiB)', (gc) => fmt(gc.allocatedBytes / 1024 / e, 1)),
    row(
      'scavenges / mark-compacts per 1,000 execs',
      (gc) => `${fmt((gc.scavenges * 1000) / e, 1)} / ${fmt((gc.markCompacts * 1000) / e, 1)}`,
    ),
  ];
  for (const [role, garbage] of [
    ['api', report.api],
    ['worker', report.worker],
  ] as const) {
    if (!garbage.profile) continue;
    const kib = (bytes: number): string => fmt(bytes / 1024 / e, 2);
    lines.push(
      '',
      `Sampling heap profile, ${role} main thread: ${kib(garbage.profile.totalBytes)} KiB sampled per exec.`,
      '',
      '| allocated in the function itself | KiB/exec | allocated in or under our innermost frame | KiB/exec |',
      '|---|---|---|---|',
      ...garbage.profile.bySelf.map((self, i) => {
        const own = garbage.profile!.byOwnCaller[i];
        return `| ${self.frame} | ${kib(self.bytes)} | ${own ? own.frame : ''} | ${own ? kib(own.bytes) : ''} |`;
      }),
    );
  }
  return lines.join('\n');
}
