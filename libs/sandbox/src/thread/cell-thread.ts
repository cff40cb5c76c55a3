import { parentPort, workerData } from 'node:worker_threads';
import { CellRun } from '../engine/cell-run';
import { CellVm } from '../engine/cell-vm';
import type { CellOutcome, CellRunRequest } from '../engine/types';
import { DEFAULT_MEMORY_BYTES, memoryMaxBytes, MIN_MEMORY_BYTES, WasmLoader } from '../engine/wasm-loader';
import { SandboxStartError } from '../errors';
import type { FromThread, ThreadData, ToThread } from './protocol';

/**
 * Entry of a cell thread: compiles the wasm once, keeps the next VM ready (64 MiB maximum), runs
 * one cell at a time on a fresh VM and releases it afterwards, off the critical path.
 */
const port = parentPort;
if (!port) throw new SandboxStartError('cell-thread must run in a worker thread');
const data = workerData as ThreadData;
const post = (message: FromThread) => port.postMessage(message);

let loader: WasmLoader;
let next: Promise<CellVm> | undefined;
let current: { runId: string; run: CellRun } | undefined;

async function boot(): Promise<void> {
  const t0 = performance.now();
  loader = await WasmLoader.load(data.variant);
  const t1 = performance.now();
  prepareNext();
  await next;
  post({ type: 'ready', compileMs: t1 - t0, instanceMs: performance.now() - t1 });
}

/** The prepared VM when the run's memory cap matches it; otherwise a VM of its own. */
function takeVm(request: CellRunRequest): Promise<CellVm> {
  const limit = request.limits.memoryLimitBytes;
  const prepared = next;
  if (prepared && limit >= MIN_MEMORY_BYTES && memoryMaxBytes(limit) === memoryMaxBytes(DEFAULT_MEMORY_BYTES)) {
    next = undefined;
    return prepared;
  }
  return CellVm.create(loader, limit);
}

function prepareNext(): void {
  if (next) return;
  const created = CellVm.create(loader, DEFAULT_MEMORY_BYTES);
  next = created;
  created.then(() => post({ type: 'warm' }), (error: unknown) => {
    if (next === created) next = undefined;
    post({ type: 'log', level: 'error', msg: 'sandbox instance creation failed', fields: { error: describe(error) } });
  });
}

async function runCell(request: CellRunRequest): Promise<void> {
  const startedAt = performance.now();
  let vm: CellVm;
  try {
    vm = await takeVm(request);
  } catch (error) {
    const outcome: CellOutcome = {
      status: 'failed',
      code: 'runtime_unavailable',
      phase: 'host',
      error: `code mode sandbox could not start: ${describe(error)}`,
      output: [],
      consoleTruncated: false,
      bridgeDispatchStarted: false,
    };
    post({ type: 'done', runId: request.runId, outcome });
    prepareNext();
    return;
  }
  const run = new CellRun(
    vm,
    request,
    {
      dispatch: (id, method, argsJson) => post({ type: 'bridge', runId: request.runId, id, method, argsJson }),
      cancel: (id) => post({ type: 'cancel', runId: request.runId, id }),
    },
    startedAt,
  );
  current = { runId: request.runId, run };
  let outcome: CellOutcome;
  try {
    outcome = await run.execute();
  } finally {
    current = undefined;
  }
  post({ type: 'done', runId: request.runId, outcome });
  const disposeError = vm.release();
  if (disposeError !== undefined) {
    post({ type: 'log', level: 'error', msg: 'sandbox dispose failed', fields: { runId: request.runId, error: describe(disposeError) } });
  }
  prepareNext();
}

port.on('message', (message: ToThread) => {
  if (message.type === 'settle') {
    if (current?.runId === message.runId) current.run.settleLater(message);
    return;
  }
  runCell(message.request).catch((error: unknown) => {
    post({ type: 'log', level: 'error', msg: 'sandbox run crashed', fields: { runId: message.request.runId, error: describe(error) } });
    process.exit(1);
  });
});

boot().catch((error: unknown) => {
  post({ type: 'log', level: 'error', msg: 'sandbox thread failed to start', fields: { error: describe(error) } });
  process.exit(1);
});

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : JSON.stringify(error) ?? 'unknown error';
}
