import { parentPort, workerData } from 'node:worker_threads';
import { RUN_UNAVAILABLE_MESSAGE, type CellOutcome } from '@codemode/cells';
import { CellRun } from '../engine/cell-run';
import { CellVm } from '../engine/cell-vm';
import { decodeParkedImage, GUEST_PRELUDE_VERSION, type ParkedRunState } from '../engine/parked-image';
import type { CellRunRequest, LegOptions, RestorePlan } from '../engine/types';
import { captureRunForRescue, type RescueImage, type RescuePlan } from '../engine/rescue-image';
import { adoptParkedRun, adoptRescuedRun } from '../engine/run-adoption';
import type { VmImage } from '../engine/vm-image';
import { VmSupply } from '../engine/vm-supply';
import { WasmLoader } from '../engine/wasm-loader';
import { SandboxStartError } from '../errors';
import type { FromThread, ThreadData, ToThread } from './protocol';

/**
 * Entry of a cell thread: compiles the wasm once, takes every new run's VM from its `VmSupply` (a
 * copy of the boot image, or the spare prepared ahead while the thread was idle) and holds every
 * live run of this thread: legs that run or wait for the host, and parked VMs. Only one VM
 * executes at a time (this is one event loop); a run waiting for the host or parked does
 * not stop another from starting or resuming.
 */
const port = parentPort;
if (!port) throw new SandboxStartError('cell-thread must run in a worker thread');
const data = workerData as ThreadData;
const busyFlag = new Int32Array(data.busy);
type BridgeMessage = Extract<FromThread, { type: 'bridge' }>;
/** A call waits in the batch at most this long while guest code keeps running (see `abortRequested`). */
const CALL_BATCH_MAX_MS = 1;
/**
 * Bridge calls the guest made in its current stretch of execution, posted together once it stops
 * (a microtask) as one message: the calls of a `Promise.all` cost the main thread one wake-up, and
 * their `tool.called` events, asked for in one turn there, one script call (SameTickAppends).
 * Every other message posts the batch first, so the order of messages is kept.
 */
let calls: BridgeMessage[] = [];
let firstCallAt = 0;

function postCalls(): void {
  if (calls.length === 0) return;
  const batch = calls;
  calls = [];
  port!.postMessage(batch.length === 1 ? batch[0] : ({ type: 'bridges', calls: batch } satisfies FromThread));
}

function postCall(message: BridgeMessage): void {
  if (calls.length === 0) {
    firstCallAt = performance.now();
    queueMicrotask(postCalls);
  }
  calls.push(message);
}

const post = (message: FromThread) => {
  postCalls();
  port.postMessage(message);
};

interface LiveRun {
  run: CellRun;
  vm: CellVm;
  inLeg: boolean;
  discarded: boolean;
  /** Changed since its last rescue image (or never captured). */
  dirty: boolean;
  /** The pool holds a rescue image of it that is still current. */
  imaged: boolean;
  /** Settle messages received for it (a rescue image says how many it reflects). */
  received: number;
}

let loader: WasmLoader;
let supply: VmSupply;
const runs = new Map<string, LiveRun>();
type RunMessage = Exclude<ToThread, { type: 'run' | 'restore' | 'rescue' }>;
/** Messages for runs whose VM is still being made (a rescued run's calls settle meanwhile), applied once it is live. */
const arriving = new Map<string, RunMessage[]>();

async function boot(): Promise<void> {
  const t0 = performance.now();
  loader = await WasmLoader.load(data.variant);
  const t1 = performance.now();
  supply = await VmSupply.open(
    loader,
    {
      warm: () => post({ type: 'warm' }),
      failed: (msg, error) => post({ type: 'log', level: 'error', msg, fields: { error: describe(error) } }),
    },
    data.preparedCatalogJson,
  );
  if (!(await supply.prepare())) throw new SandboxStartError('sandbox instance creation failed');
  post({ type: 'ready', compileMs: t1 - t0, instanceMs: performance.now() - t1 });
}

/**
 * A parked run's image to start from (SPEC §12) instead of running the cell, or (`rescue`) the
 * rescue image of a run whose thread was terminated under it (SPEC §10).
 */
type Restoring = { image: Uint8Array; plan: RestorePlan; rescue?: undefined } | { image: RescueImage; rescue: RescuePlan };

async function startRun(request: CellRunRequest, slot: number, restoring?: Restoring): Promise<void> {
  const startedAt = performance.now();
  const { runId } = request;
  let vm: CellVm;
  let parked: { vm: VmImage; run: ParkedRunState } | undefined;
  try {
    parked = !restoring
      ? undefined
      : restoring.rescue
        ? restoring.image
        : decodeParkedImage(restoring.image, runId, { wasmHash: loader.wasmHash, preludeVersion: GUEST_PRELUDE_VERSION });
    vm = parked
      ? await CellVm.restoreParked(loader, parked.vm, request.limits.memoryLimitBytes, parked.run.seeded)
      : await supply.take(request.limits.memoryLimitBytes);
  } catch (error) {
    notStarted(runId, error, restoring !== undefined);
    return;
  }
  const run = new CellRun(vm, request, {
    dispatch: (id, method, argsJson, callNumber) => postCall({ type: 'bridge', runId, id, method, argsJson, callNumber }),
    cancel: (id) => post({ type: 'cancel', runId, id }),
    watch: (timeoutMs) => post({ type: 'watch', runId, timeoutMs }),
    replayed: () => post({ type: 'replayed', runId }),
    admitted: (id) => post({ type: 'admitted', runId, id }),
    busy: (on) => {
      if (on) executing(runId);
      Atomics.store(busyFlag, 0, on ? slot : 0);
    },
    // Checked by the interrupt handler while guest code runs: also when calls that have waited in
    // the batch too long go, so a guest computing after a call does not hold the call back.
    abortRequested: () => {
      if (calls.length > 0 && performance.now() - firstCallAt >= CALL_BATCH_MAX_MS) postCalls();
      return Atomics.load(busyFlag, 1) === slot;
    },
  });
  if (parked && restoring) {
    try {
      if (restoring.rescue) adoptRescuedRun(run, parked.run, restoring.rescue);
      else adoptParkedRun(run, parked.run, restoring.plan);
    } catch (error) {
      // A host state that does not fit its VM: this run is unavailable, the thread's other runs go on.
      vm.release();
      notStarted(runId, error, true);
      return;
    }
  }
  const live: LiveRun = { run, vm, inLeg: false, discarded: false, dirty: true, imaged: false, received: 0 };
  runs.set(runId, live);
  const legDone = leg(runId, live, { timeoutMs: request.limits.timeoutMs, awaitResults: request.awaitResults === true, startedAt });
  const early = arriving.get(runId) ?? [];
  arriving.delete(runId);
  for (const message of early) onRunMessage(message);
  await legDone;
}

/**
 * SPEC §10: `runId`'s guest code is about to execute, and nothing stops a native builtin in it but
 * terminating this thread. So every other run here (idle in a leg, or parked: a resume may be
 * waiting behind this code) that changed since its last rescue image gets a new one first (the pool rebuilds it from that on another thread), and this
 * run's own image stops holding.
 */
function executing(runId: string): void {
  const self = runs.get(runId);
  if (self) {
    self.dirty = true;
    if (self.imaged) post({ type: 'stale', runId });
    self.imaged = false;
  }
  if (runs.size < 2) return;
  for (const [otherId, other] of runs) {
    if (otherId === runId || !other.dirty || other.discarded) continue;
    other.dirty = false;
    const captured = captureRunForRescue(other.run, other.received);
    if (!captured) continue;
    other.imaged = true;
    post({ type: 'rescue', runId: otherId, image: captured.image, state: captured.state });
  }
}

/** The run could not start here: it fails `runtime_unavailable` (SPEC §12: an image this thread cannot restore leaves it unavailable). */
function notStarted(runId: string, error: unknown, restoring: boolean): void {
  arriving.delete(runId);
  const outcome: CellOutcome = {
    status: 'failed',
    code: 'runtime_unavailable',
    phase: 'host',
    error: restoring ? RUN_UNAVAILABLE_MESSAGE : `code mode sandbox could not start: ${describe(error)}`,
    output: [],
    consoleTruncated: false,
    bridgeDispatchStarted: restoring,
  };
  if (restoring) post({ type: 'log', level: 'warn', msg: 'parked run image not restored', fields: { runId, error: describe(error) } });
  post({ type: 'done', runId, outcome });
  void supply.prepare();
}

async function leg(runId: string, live: LiveRun, options: LegOptions): Promise<void> {
  live.inLeg = true;
  let outcome: CellOutcome;
  try {
    outcome = await live.run.leg(options);
  } finally {
    live.inLeg = false;
  }
  post({ type: 'done', runId, outcome });
  if (outcome.status !== 'waiting' || live.discarded) release(runId, live);
  void supply.prepare();
}

function release(runId: string, live: LiveRun): void {
  if (runs.get(runId) === live) runs.delete(runId);
  const disposeError = live.vm.release();
  if (disposeError !== undefined) {
    post({ type: 'log', level: 'error', msg: 'sandbox dispose failed', fields: { runId, error: describe(disposeError) } });
  }
}

function crash(runId: string, error: unknown): void {
  post({ type: 'log', level: 'error', msg: 'sandbox run crashed', fields: { runId, error: describe(error) } });
  process.exit(1);
}

port.on('message', (message: ToThread) => {
  if (message.type === 'run' || message.type === 'restore' || message.type === 'rescue') {
    const restoring: Restoring | undefined =
      message.type === 'restore'
        ? { image: message.image, plan: message.plan }
        : message.type === 'rescue'
          ? { image: message.image, rescue: message.plan }
          : undefined;
    arriving.set(message.request.runId, []);
    startRun(message.request, message.slot, restoring).catch((error: unknown) => crash(message.request.runId, error));
    return;
  }
  onRunMessage(message);
});

function onRunMessage(message: RunMessage): void {
  const live = runs.get(message.runId);
  if (!live) {
    arriving.get(message.runId)?.push(message);
    return;
  }
  // Host state changes here (and queued calls may start): the next rescue image must show it.
  live.dirty = true;
  if (message.type === 'settle') {
    live.received += 1;
    live.run.settleLater(message);
  } else if (message.type === 'platform') live.run.markPlatform(message.id);
  else if (message.type === 'hold') live.run.hold(message.id);
  else if (message.type === 'unhold') live.run.unhold(message.id);
  else if (message.type === 'discard') {
    live.discarded = true;
    if (live.inLeg) live.run.abort();
    else release(message.runId, live);
  } else if (!live.inLeg) {
    const options = { timeoutMs: message.timeoutMs, awaitResults: message.awaitResults };
    leg(message.runId, live, options).catch((error: unknown) => crash(message.runId, error));
  }
}

boot().catch((error: unknown) => {
  post({ type: 'log', level: 'error', msg: 'sandbox thread failed to start', fields: { error: describe(error) } });
  process.exit(1);
});

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : (JSON.stringify(error) ?? 'unknown error');
}
