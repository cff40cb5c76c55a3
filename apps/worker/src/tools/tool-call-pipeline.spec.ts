import { toolBlockedMessage } from '@codemode/contracts';
import { MAX_BATCH_EVENTS, RUN_HISTORY_LIMIT_MESSAGE } from '@codemode/events';
import { McpKind } from './kinds/mcp';
import { PlatformAnsweredKind } from './kinds/platform-answered';
import { PlatformSurfaceKind } from './kinds/platform-surface';
import { surfaceHandlers } from './kinds/surface-handlers';
import type { KindCall, ToolKind } from './kinds/tool-kind';
import { WebhookKind } from './kinds/webhook';
import { callOf, CLIENT_TOOLS, pipelineOver, recordingGate, RUN, sessionCatalog, type MemoryEventLog } from './testing/tool-call-fakes';
import { CANCELED_MESSAGE } from './tool-call-error';
import type { ToolCallPipeline } from './tool-call-pipeline';
import { EVENTS_UNRECORDED_MESSAGE, TRAIL_BACKLOG_BYTES, TRAIL_BACKLOG_EVENTS, TRAIL_HOLD_BYTES, TRAIL_HOLD_MS } from './run-event-writer';

/** A kind the worker answers, for the core tool `read`: it answers with `answer`, and notes each call it made. */
class ReadKind implements ToolKind {
  readonly answeredBy = 'worker';
  inProcess = true;
  readonly made: KindCall[] = [];
  answer: (call: KindCall) => Promise<unknown> = () => Promise.resolve({ text: 'hello' });

  handles({ entry }: Parameters<ToolKind['handles']>[0]): boolean {
    return entry.source === 'openclaw' && entry.toolName === 'read';
  }

  call(call: KindCall): Promise<unknown> {
    this.made.push(call);
    return this.answer(call);
  }
}

/** The same for the client tool `refund`, a write (not replay-safe; idempotent when its registration says so). */
class RefundKind extends ReadKind {
  override handles({ entry }: Parameters<ToolKind['handles']>[0]): boolean {
    return entry.source === 'client' && entry.toolName === 'refund';
  }
}

const never = new AbortController().signal;
/** Lets the run's same-tick event writes land. */
const written = async (): Promise<void> => {
  for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
};
const read = (n?: number) => callOf('bridge:callValue:1', 'callValue', { tool: 'read', input: { path: 'a.txt' } }, n);
const refund = (n?: number) => callOf('bridge:callValue:1', 'callValue', { tool: 'refund', input: { order: 7 } }, n);
/** A read made now on `pipeline`, and whether it has answered yet. */
function readNow(pipeline: ToolCallPipeline, n: number): { done: Promise<unknown>; answered: () => boolean } {
  let answered = false;
  const done = pipeline.call(read(n), never).then(() => (answered = true));
  return { done, answered: () => answered };
}
/**
 * With the run's writes held (a slow Redis), `atOnce` reads answer at once and the next one only
 * once every trailed event landed; after that, the backlog is empty again and a read answers at once.
 */
async function expectTheBacklogBounded(pipeline: ToolCallPipeline, log: MemoryEventLog, atOnce: number): Promise<void> {
  const release = log.holdWrites();
  for (let n = 1; n <= atOnce; n += 1) await pipeline.call(read(n), never);
  const last = readNow(pipeline, atOnce + 1);
  await written();
  expect(last.answered()).toBe(false);
  expect(log.written).toEqual([]);
  release();
  await last.done;
  expect(log.written).toHaveLength(2 * (atOnce + 1));
  log.holdWrites();
  const next = readNow(pipeline, atOnce + 2);
  await written();
  expect(next.answered()).toBe(true);
}
/** A kind whose call answers when the test says so. */
function answeringLater<Kind extends ReadKind>(kind: Kind): { kind: Kind; answer: (value: unknown) => void } {
  const held = { kind, answer: (_value: unknown): void => undefined };
  kind.answer = () => new Promise((resolve) => (held.answer = resolve));
  return held;
}

/**
 * `call` on a pipeline over `held.kind`: `tool.called` is written while the kind has not answered,
 * and `tool.settled` in an append of its own once it answers `answer`.
 */
async function expectRecordedBeforeItRuns(
  held: { kind: ToolKind; answer: (value: unknown) => void },
  call: ReturnType<typeof read>,
  answer: unknown,
  options: Parameters<typeof pipelineOver>[1] = {},
): Promise<void> {
  const { pipeline, log } = pipelineOver([held.kind], options);
  const calling = pipeline.call(call, never);
  await written();
  expect(log.types()).toEqual(['tool.called']);
  held.answer(answer);
  await calling;
  expect(log.calls).toEqual([['tool.called'], ['tool.settled']]);
}

describe('ToolCallPipeline: a call the worker answers', () => {
  it('records tool.called with its call key, makes the call, records tool.settled, and counts it', async () => {
    const kind = new ReadKind();
    const { pipeline, log, events, callCount } = pipelineOver([kind]);
    await expect(pipeline.call(read(7), never)).resolves.toEqual({ text: 'hello' });
    await events.landed();
    expect(log.types()).toEqual(['tool.called', 'tool.settled']);
    expect(log.written[0]).toMatchObject({ runId: 'run_1', epoch: 3 });
    expect(log.dataOf('tool.called')[0]).toEqual({
      callId: 'bridge:callValue:1',
      tool: 'read',
      source: 'openclaw',
      inputBytes: JSON.stringify({ path: 'a.txt' }).length,
      callKey: 'run_1:7',
    });
    expect(log.dataOf('tool.settled')[0]).toMatchObject({ callId: 'bridge:callValue:1', tool: 'read', ok: true });
    expect(kind.made[0]).toMatchObject({ input: { path: 'a.txt' }, callKey: 'run_1:7', handedOver: false });
    expect(callCount()).toBe(1);
  });

  it('a call that changes nothing (a replay-safe tool made in this process) is recorded once it answered: tool.called and tool.settled in one append', async () => {
    const held = answeringLater(new ReadKind());
    const { pipeline, log, events } = pipelineOver([held.kind]);
    const calling = pipeline.call(read(2), never);
    await written();
    expect(held.kind.made).toHaveLength(1);
    expect(log.types()).toEqual([]);
    held.answer({ text: 'late' });
    await expect(calling).resolves.toEqual({ text: 'late' });
    await events.landed();
    expect(log.calls).toEqual([['tool.called', 'tool.settled']]);
    expect(log.dataOf('tool.called')[0]).toEqual({
      callId: 'bridge:callValue:1',
      tool: 'read',
      source: 'openclaw',
      inputBytes: JSON.stringify({ path: 'a.txt' }).length,
      callKey: 'run_1:2',
    });
    expect(log.dataOf('tool.settled')[0]).toMatchObject({ callId: 'bridge:callValue:1', tool: 'read', ok: true });
  });

  it("the guest has a read's value before its events land; the run's next write, and its end, wait for them", async () => {
    const { pipeline, log, events } = pipelineOver([new ReadKind(), new RefundKind()]);
    const release = log.holdWrites();
    await expect(pipeline.call(read(1), never)).resolves.toEqual({ text: 'hello' });
    expect(log.written).toEqual([]);
    let landed = false;
    void events.landed().then(() => (landed = true));
    const writing = pipeline.call(refund(2), never);
    await written();
    expect(landed).toBe(false);
    // Only the read's append was sent: the write's tool.called waits for it to land.
    expect(log.calls).toEqual([['tool.called', 'tool.settled']]);
    expect(log.written).toEqual([]);
    release();
    await writing;
    expect(landed).toBe(true);
    expect(log.calls).toEqual([['tool.called', 'tool.settled'], ['tool.called'], ['tool.settled']]);
    expect(log.dataOf('tool.called').map((data) => (data as { tool: string }).tool)).toEqual(['read', 'refund']);
  });

  it("a read's events that cannot be written stop the run: its next call is refused, made and recorded never", async () => {
    const refundKind = new RefundKind();
    const { pipeline, log, events, stopped } = pipelineOver([new ReadKind(), refundKind]);
    log.failWith = new Error('ERR unexpected reply from the append script');
    await expect(pipeline.call(read(1), never)).resolves.toEqual({ text: 'hello' });
    await events.landed();
    expect(stopped).toEqual(['run_1']);
    expect(events.unrecorded).toBe(true);
    log.failWith = undefined;
    await expect(pipeline.call(refund(2), never)).rejects.toThrow(EVENTS_UNRECORDED_MESSAGE);
    expect(refundKind.made).toEqual([]);
    expect(log.written).toEqual([]);
  });

  it('a call whose own events are refused for a cause other than the cap or Redis stops the run; it rejects with the unrecorded message', async () => {
    const refundKind = new RefundKind();
    const { pipeline, log, events, stopped } = pipelineOver([refundKind]);
    log.failWith = new Error('ERR unexpected reply from the append script');
    await expect(pipeline.call(refund(1), never)).rejects.toThrow(EVENTS_UNRECORDED_MESSAGE);
    expect(stopped).toEqual(['run_1']);
    expect(events.unrecorded).toBe(true);
    expect(refundKind.made).toEqual([]);
    // A failed call's outcome that cannot be written is what it rejects with, not the tool's error.
    const failing = new RefundKind();
    const second = pipelineOver([failing]);
    failing.answer = () => {
      second.log.failWith = new Error('ERR unexpected reply from the append script');
      return Promise.reject(new Error('card declined'));
    };
    await expect(second.pipeline.call(refund(1), never)).rejects.toThrow(EVENTS_UNRECORDED_MESSAGE);
    expect(second.log.types()).toEqual(['tool.called']);
    expect(second.events.unrecorded).toBe(true);
    expect(second.stopped).toEqual(['run_1']);
  });

  it("a later read's events are not written when an earlier read's were refused (the run stopped on them)", async () => {
    const { pipeline, log, events, stopped } = pipelineOver([new ReadKind()]);
    const release = log.holdWrites();
    await expect(pipeline.call(read(1), never)).resolves.toEqual({ text: 'hello' });
    void events.landed();
    await written();
    // Answered while the first read's events are on their way, in a batch of its own.
    await expect(pipeline.call(read(2), never)).resolves.toEqual({ text: 'hello' });
    log.capAt = 0;
    release();
    await events.landed();
    expect(events.historyFull).toBe(true);
    expect(stopped).toContain('run_1');
    expect(log.calls).toEqual([['tool.called', 'tool.settled']]);
    expect(log.written).toEqual([]);
  });

  describe('reads held for a shared append (the hold timer is faked, so only the test moves it)', () => {
    beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }));
    afterEach(() => jest.useRealTimers());

    it('reads in a row share an append: their events are held until a batch is full, and sent as one script call', async () => {
      const { pipeline, log } = pipelineOver([new ReadKind()]);
      const reads = MAX_BATCH_EVENTS / 2;
      for (let n = 1; n < reads; n += 1) await pipeline.call(read(n), never);
      await written();
      expect(log.calls).toEqual([]);
      await pipeline.call(read(reads), never);
      await written();
      expect(log.calls).toEqual([Array.from({ length: reads }, () => ['tool.called', 'tool.settled']).flat()]);
      expect(log.dataOf('tool.called').map((data) => (data as { callKey: string }).callKey)).toEqual(
        Array.from({ length: reads }, (_, n) => `run_1:${n + 1}`),
      );
    });

    it("a read's events are held no longer than TRAIL_HOLD_MS when no other read or write comes", async () => {
      const { pipeline, log } = pipelineOver([new ReadKind()]);
      await pipeline.call(read(1), never);
      jest.advanceTimersByTime(TRAIL_HOLD_MS - 1);
      await written();
      expect(log.calls).toEqual([]);
      jest.advanceTimersByTime(1);
      await written();
      expect(log.calls).toEqual([['tool.called', 'tool.settled']]);
    });

    it("the held events go at once as one append with a mark for the run's end to follow, only when it is the run's last write before that end", async () => {
      const { pipeline, log, events } = pipelineOver([new ReadKind()]);
      expect(events.sendMarkedTrail()).toBeUndefined();
      await pipeline.call(read(1), never);
      await pipeline.call(read(2), never);
      const mark = events.sendMarkedTrail();
      expect(mark).toEqual(expect.any(String));
      expect(log.calls).toEqual([['tool.called', 'tool.settled', 'tool.called', 'tool.settled']]);
      expect(events.sendMarkedTrail()).toBeUndefined();
      await events.landed();
      expect(log.marks).toEqual([mark]);

      // A batch sent and not answered yet (a slow Redis): the end waits for it.
      const release = log.holdWrites();
      await pipeline.call(read(3), never);
      jest.advanceTimersByTime(TRAIL_HOLD_MS);
      await pipeline.call(read(4), never);
      expect(events.sendMarkedTrail()).toBeUndefined();
      release();
      await events.landed();
      expect(log.marks).toEqual([mark]);
      expect(log.written).toHaveLength(8);
    });

    it('no mark is left when the marked append is refused at the cap: the run stops on it as on any trailed batch', async () => {
      const { pipeline, log, events, stopped } = pipelineOver([new ReadKind()]);
      log.capAt = 1;
      await pipeline.call(read(1), never);
      expect(events.sendMarkedTrail()).toEqual(expect.any(String));
      await events.landed();
      expect(log.marks).toEqual([]);
      expect(events.historyFull).toBe(true);
      expect(stopped).toContain('run_1');
      await pipeline.call(read(2), never).catch(() => undefined);
      expect(events.sendMarkedTrail()).toBeUndefined();
    });

    it(`a read's guest waits once ${TRAIL_BACKLOG_EVENTS} trailed events are not in the log (a slow Redis), and goes on once they are`, async () => {
      const { pipeline, log } = pipelineOver([new ReadKind()]);
      await expectTheBacklogBounded(pipeline, log, TRAIL_BACKLOG_EVENTS / 2);
    });

    it("a restart-safe run's reads are sent once what their events keep of the calls reaches TRAIL_HOLD_BYTES", async () => {
      const kind = new ReadKind();
      const value = { text: 'x'.repeat(TRAIL_HOLD_BYTES / 2) };
      kind.answer = () => Promise.resolve(value);
      const { pipeline, log } = pipelineOver([kind], { run: { ...RUN, restartSafe: true } });
      await pipeline.call(read(1), never);
      await written();
      expect(log.calls).toEqual([]);
      await pipeline.call(read(2), never);
      await written();
      expect(log.calls).toEqual([['tool.called', 'tool.settled', 'tool.called', 'tool.settled']]);
    });

    it(`a read's guest waits once what its run's trailed events not in the log keep passes ${TRAIL_BACKLOG_BYTES} bytes`, async () => {
      const kind = new ReadKind();
      const value = { text: 'x'.repeat(40_000) };
      kind.answer = () => Promise.resolve(value);
      const { pipeline, log } = pipelineOver([kind], { run: { ...RUN, restartSafe: true } });
      await expectTheBacklogBounded(pipeline, log, Math.floor(TRAIL_BACKLOG_BYTES / JSON.stringify(value).length));
    });
  });

  it('an approval is requested only once the events of the reads before it landed', async () => {
    const refundKind = new RefundKind();
    const { pipeline, log, approvals } = pipelineOver([new ReadKind(), refundKind], {
      policy: { rules: [{ tool: 'refund', decision: 'approve' }] },
    });
    approvals.decided = { decision: 'approve', decidedAt: new Date().toISOString() };
    const release = log.holdWrites();
    await pipeline.call(read(1), never);
    const writing = pipeline.call(refund(2), never);
    await written();
    expect(approvals.byId.size).toBe(0);
    release();
    await writing;
    expect(approvals.byId.size).toBe(1);
    expect(log.types()).toEqual(['tool.called', 'tool.settled', 'tool.called', 'tool.settled']);
  });

  it('a call that writes is recorded before it runs, its outcome in an append of its own', async () => {
    await expectRecordedBeforeItRuns(answeringLater(new RefundKind()), refund(2), { refunded: true });
  });

  it('a replay-safe call a party outside the worker sees is recorded before it runs', async () => {
    await expectRecordedBeforeItRuns(answeringLater(Object.assign(new ReadKind(), { inProcess: false })), read(2), { text: 'late' });
  });

  it('an idempotent write is recorded before it runs too: it takes effect, once per call key', async () => {
    const catalog = sessionCatalog(CLIENT_TOOLS.map((tool) => (tool.name === 'refund' ? { ...tool, idempotent: true } : tool)));
    await expectRecordedBeforeItRuns(answeringLater(new RefundKind()), refund(2), { refunded: true }, { catalog });
  });

  it('gives a call the sandbox did not number no call key', async () => {
    const kind = new ReadKind();
    const { pipeline, log, events } = pipelineOver([kind]);
    await pipeline.call(read(), never);
    await events.landed();
    expect(log.dataOf('tool.called')[0]).not.toHaveProperty('callKey');
    expect(kind.made[0].callKey).toBeUndefined();
  });

  it("keeps a replay-safe run's input and outcome in the log", async () => {
    const { pipeline, log, events } = pipelineOver([new ReadKind()], { run: { ...RUN, restartSafe: true } });
    await pipeline.call(read(1), never);
    await events.landed();
    expect(log.dataOf('tool.called')[0]).toMatchObject({ input: { path: 'a.txt' } });
    expect(log.dataOf('tool.settled')[0]).toMatchObject({ ok: true, result: { text: 'hello' } });
  });

  it('records a rejection as the guest sees it (name and message) and rejects with it', async () => {
    const kind = new ReadKind();
    kind.answer = () => Promise.reject(new TypeError('no such file'));
    const { pipeline, log } = pipelineOver([kind], { run: { ...RUN, restartSafe: true } });
    await expect(pipeline.call(read(1), never)).rejects.toThrow('no such file');
    expect(log.dataOf('tool.settled')[0]).toMatchObject({ ok: false, failure: { name: 'TypeError', message: 'no such file' } });
  });

  it('records no outcome of a call cut off by the run being discarded (a replay makes it again)', async () => {
    const kind = new RefundKind();
    const abort = new AbortController();
    kind.answer = () => {
      abort.abort();
      return Promise.reject(new Error('aborted'));
    };
    const { pipeline, log } = pipelineOver([kind]);
    await expect(pipeline.call(refund(1), abort.signal)).rejects.toThrow('aborted');
    expect(log.types()).toEqual(['tool.called']);
  });

  it('records nothing of a call that changes nothing cut off by the run being discarded', async () => {
    const kind = new ReadKind();
    const abort = new AbortController();
    kind.answer = () => {
      abort.abort();
      return Promise.reject(new Error('aborted'));
    };
    const { pipeline, log } = pipelineOver([kind]);
    await expect(pipeline.call(read(1), abort.signal)).rejects.toThrow('aborted');
    await written();
    expect(log.written).toEqual([]);
  });

  it('hands the kind what is left of the leg, read when the kind asks, never below 0', async () => {
    const kind = new ReadKind();
    const { pipeline } = pipelineOver([kind], { legLeftMs: -50 });
    await pipeline.call(read(1), never);
    expect(kind.made[0].budgetLeft()).toBe(0);
  });

  it('refuses an unknown tool before anything is recorded or counted', async () => {
    const { pipeline, log, callCount } = pipelineOver([new ReadKind()]);
    await expect(pipeline.call(callOf('c', 'callValue', { tool: 'nope' }), never)).rejects.toThrow(
      'unknown tool nope; use catalog.search(query) to find tools.',
    );
    expect(log.written).toEqual([]);
    expect(callCount()).toBe(0);
  });

  it('refuses a tool no kind handles, counted but not recorded', async () => {
    const { pipeline, log, callCount } = pipelineOver([new ReadKind()]);
    await expect(pipeline.call(callOf('c', 'callValue', { tool: 'ls', input: {} }), never)).rejects.toThrow(
      'tool ls has no implementation on this worker.',
    );
    expect(log.written).toEqual([]);
    expect(callCount()).toBe(1);
  });

  it('gives a call to the first kind of the registry that handles it', async () => {
    const first = new ReadKind();
    const second = new ReadKind();
    const { pipeline } = pipelineOver([first, second]);
    await pipeline.call(read(1), never);
    expect([first.made.length, second.made.length]).toEqual([1, 0]);
  });
});

describe('ToolCallPipeline: policy (SPEC §11)', () => {
  it('records tool.blocked for a denied tool and never makes the call', async () => {
    const kind = new ReadKind();
    const { pipeline, log } = pipelineOver([kind], { policy: { rules: [{ tool: 'read', decision: 'deny' }] } });
    await expect(pipeline.call(read(1), never)).rejects.toThrow(toolBlockedMessage('read'));
    expect(log.types()).toEqual(['tool.blocked']);
    expect(kind.made).toEqual([]);
  });

  it('makes an approved call once its approval is decided, without stepping aside when it is decided already', async () => {
    const kind = new ReadKind();
    const { pipeline, approvals, log } = pipelineOver([kind], { policy: { rules: [{ tool: 'read', decision: 'approve' }] } });
    approvals.decided = { decision: 'approve', decidedAt: new Date().toISOString() };
    const gate = recordingGate();
    await expect(pipeline.call(read(1), never, gate)).resolves.toEqual({ text: 'hello' });
    expect(approvals.requested).toHaveLength(1);
    expect(gate.moves).toEqual([]);
    expect(log.types()).toEqual(['tool.called', 'tool.settled']);
  });

  it('records an approved call that changes nothing before it runs, as any call', async () => {
    const held = answeringLater(new ReadKind());
    const { pipeline, approvals, log } = pipelineOver([held.kind], { policy: { rules: [{ tool: 'read', decision: 'approve' }] } });
    approvals.decided = { decision: 'approve', decidedAt: new Date().toISOString() };
    const calling = pipeline.call(read(1), never, recordingGate());
    await written();
    expect(held.kind.made).toHaveLength(1);
    expect(log.types()).toEqual(['tool.called']);
    held.answer({ text: 'late' });
    await calling;
    expect(log.calls).toEqual([['tool.called'], ['tool.settled']]);
  });

  it('rejects a denied approval with its reason', async () => {
    const kind = new ReadKind();
    const { pipeline, approvals } = pipelineOver([kind], { policy: { rules: [{ tool: 'read', decision: 'approve' }] } });
    approvals.decided = { decision: 'deny', reason: 'not today', decidedAt: new Date().toISOString() };
    await expect(pipeline.call(read(1), never)).rejects.toThrow('code mode tool read was denied: not today');
    expect(kind.made).toEqual([]);
  });
});

describe('ToolCallPipeline: the history cap (SPEC §6)', () => {
  it('stops the run and rejects with the cap message when tool.called is refused', async () => {
    const kind = new RefundKind();
    const { pipeline, log, events, stopped } = pipelineOver([kind]);
    log.capAt = 0;
    await expect(pipeline.call(refund(1), never)).rejects.toThrow(RUN_HISTORY_LIMIT_MESSAGE);
    expect(events.historyFull).toBe(true);
    expect(stopped).toEqual(['run_1']);
    expect(kind.made).toEqual([]);
  });

  it('stops the run when the events of a call that changes nothing are refused (its guest had the value); its next call rejects with the cap message', async () => {
    const { pipeline, log, events, stopped } = pipelineOver([new ReadKind()]);
    log.capAt = 0;
    await expect(pipeline.call(read(1), never)).resolves.toEqual({ text: 'hello' });
    await events.landed();
    expect(events.historyFull).toBe(true);
    expect(stopped).toContain('run_1');
    expect(log.written).toEqual([]);
    await expect(pipeline.call(read(2), never)).rejects.toThrow(RUN_HISTORY_LIMIT_MESSAGE);
  });

  it('rejects with the cap message when tool.settled is refused, whatever the call answered', async () => {
    const { pipeline, log, stopped } = pipelineOver([new RefundKind()]);
    log.capAt = 1;
    await expect(pipeline.call(refund(1), never)).rejects.toThrow(RUN_HISTORY_LIMIT_MESSAGE);
    expect(stopped).toContain('run_1');
  });

  it("stops the run when a read's tool.settled is refused at the cap, tool.called written", async () => {
    const { pipeline, log, events, stopped } = pipelineOver([new ReadKind()]);
    log.capAt = 1;
    await expect(pipeline.call(read(1), never)).resolves.toEqual({ text: 'hello' });
    await events.landed();
    expect(events.historyFull).toBe(true);
    expect(stopped).toContain('run_1');
    expect(log.types()).toEqual(['tool.called']);
  });
});

describe('ToolCallPipeline: calls the platform answers (SPEC §15)', () => {
  const askUser = (n = 1) => callOf('bridge:callValue:2', 'callValue', { tool: 'ask_user', input: { q: 'ok?' } }, n);
  const agentsRun = callOf('bridge:callValue:3', 'callValue', { tool: 'agents.run', input: { task: 't' } }, 2);

  it('in a run that parks: the bridge takes an allowed call aside; the pipeline records it as the platform answers it', async () => {
    const { pipeline, log } = pipelineOver([
      new PlatformAnsweredKind(),
      new WebhookKind({ addressPolicy: () => never as never, secretOf: () => undefined }),
    ]);
    expect(pipeline.handsToPlatform(askUser())).toBe(true);
    expect(pipeline.handsToPlatform(agentsRun)).toBe(true);
    const abort = new AbortController();
    const gate = recordingGate();
    const pending = pipeline.call(askUser(), abort.signal, gate);
    await written();
    expect(log.dataOf('tool.called')[0]).toMatchObject({ tool: 'ask_user', source: 'client', answeredBy: 'platform', callKey: 'run_1:1' });
    // Taken aside by the bridge already: not handed again.
    expect(gate.moves).toEqual([]);
    abort.abort();
    await expect(pending).rejects.toThrow(CANCELED_MESSAGE);
    expect(log.types()).toEqual(['tool.called']);
  });

  it('in a run that parks: a call the policy must approve is dispatched, approved, then handed to the platform', async () => {
    const { pipeline, approvals } = pipelineOver([new PlatformAnsweredKind()], {
      policy: { rules: [{ tool: 'ask_user', decision: 'approve' }] },
    });
    approvals.decided = { decision: 'approve', decidedAt: new Date().toISOString() };
    expect(pipeline.handsToPlatform(askUser())).toBe(false);
    const abort = new AbortController();
    const gate = recordingGate();
    const pending = pipeline.call(askUser(), abort.signal, gate);
    await written();
    expect(gate.moves).toEqual(['handToPlatform']);
    abort.abort();
    await expect(pending).rejects.toThrow(CANCELED_MESSAGE);
  });

  it('in an awaitResults run: agents.run waits in flight for the platform answer', async () => {
    const { pipeline, log } = pipelineOver([new PlatformAnsweredKind()], { run: { ...RUN, awaitResults: true } });
    const pending = pipeline.call(agentsRun, never);
    await written();
    expect(log.dataOf('tool.called')[0]).toMatchObject({ tool: 'agents.run', source: 'platform', answeredBy: 'platform' });
    expect(pipeline.awaitsPlatform('bridge:callValue:3')).toBe(true);
    expect(pipeline.settlePlatform('bridge:callValue:3', { ok: true, value: { answer: 42 } })).toBe(true);
    await expect(pending).resolves.toEqual({ answer: 42 });
    expect(pipeline.awaitsPlatform('bridge:callValue:3')).toBe(false);
    expect(pipeline.settlePlatform('bridge:callValue:3', { ok: true, value: null })).toBe(false);
    expect(log.types()).toEqual(['tool.called']);
  });

  it('in an awaitResults run: a platform rejection reaches the guest with its name', async () => {
    const { pipeline } = pipelineOver([new PlatformAnsweredKind()], { run: { ...RUN, awaitResults: true } });
    const pending = pipeline.call(agentsRun, never);
    await written();
    pipeline.settlePlatform('bridge:callValue:3', { ok: false, error: { name: 'RangeError', message: 'too deep' } });
    await expect(pending).rejects.toMatchObject({ name: 'RangeError', message: 'too deep' });
  });

  it('in an awaitResults run: a call whose tool.called was refused waits for nothing', async () => {
    const { pipeline, log } = pipelineOver([new PlatformAnsweredKind()], { run: { ...RUN, awaitResults: true } });
    log.capAt = 0;
    await expect(pipeline.call(agentsRun, never)).rejects.toThrow(RUN_HISTORY_LIMIT_MESSAGE);
    expect(pipeline.awaitsPlatform('bridge:callValue:3')).toBe(false);
  });

  it('in an awaitResults run: a client tool without endpoint is the webhook kind’s, which refuses it (recorded)', async () => {
    const kinds = [new PlatformAnsweredKind(), new WebhookKind({ addressPolicy: () => never as never, secretOf: () => undefined })];
    const { pipeline, log } = pipelineOver(kinds, { run: { ...RUN, awaitResults: true } });
    await expect(pipeline.call(askUser(), never)).rejects.toThrow(
      'client tool ask_user is answered by the platform; it cannot be awaited with awaitResults.',
    );
    expect(log.types()).toEqual(['tool.called', 'tool.settled']);
    expect(log.dataOf('tool.called')[0]).not.toHaveProperty('answeredBy');
  });

  it('never hands a worker-answered call, an MCP call or an unknown tool to the platform', () => {
    const { pipeline } = pipelineOver([new PlatformAnsweredKind(), new ReadKind()]);
    expect(pipeline.handsToPlatform(read(1))).toBe(false);
    expect(pipeline.handsToPlatform(callOf('c', 'namespace', { server: 'tracker', tool: 'create_issue', args: [] }))).toBe(false);
    expect(pipeline.handsToPlatform(callOf('c', 'callValue', { tool: 'nope' }))).toBe(false);
  });
});

describe('ToolCallPipeline: MCP calls and surfaces', () => {
  it("maps an MCP call's positional args onto the tool's schema and calls its server with the call key", async () => {
    const made: unknown[] = [];
    const callTool = (...args: unknown[]) => {
      made.push(args);
      return Promise.resolve({ content: [{ type: 'text' as const, text: 'created' }] });
    };
    const mcp = new McpKind(() => ({ callTool }));
    const { pipeline, log } = pipelineOver([mcp]);
    await pipeline.call(callOf('m', 'namespace', { server: 'tracker', tool: 'create_issue', args: [{ title: 'Broken' }] }, 4), never);
    expect(made[0]).toEqual(['tracker', 'create_issue', { title: 'Broken' }, expect.objectContaining({ idempotencyKey: 'run_1:4' })]);
    expect(log.dataOf('tool.called')[0]).toMatchObject({ tool: 'MCP.tracker.createIssue', source: 'mcp' });
  });

  it('refuses an MCP tool that is not there, or when the deployment has no MCP servers', async () => {
    const { pipeline } = pipelineOver([new McpKind(() => null)]);
    await expect(pipeline.call(callOf('m', 'namespace', { server: 'tracker', tool: 'create_issue', args: [] }), never)).rejects.toThrow(
      'MCP tool tracker.create_issue is not available.',
    );
    await expect(pipeline.call(callOf('m', 'namespace', { server: 'tracker', tool: 'drop_db', args: [] }), never)).rejects.toThrow(
      'MCP tool tracker.drop_db is not available.',
    );
  });

  it("records what a surface's handler says of its call (nodes.invoke: node and command)", async () => {
    const nodes = { list: () => Promise.resolve([]), get: jestless, invoke: () => Promise.resolve({ ok: true }) };
    const kind = new PlatformSurfaceKind(
      surfaceHandlers({ nodes, skills: { list: jestless, read: jestless }, nodeInvokeTimeoutMs: 30_000 }),
    );
    const { pipeline, log } = pipelineOver([kind]);
    await pipeline.call(callOf('n', 'callValue', { tool: 'nodes.invoke', input: { node: 'mac', command: 'node.listDir' } }, 1), never);
    expect(log.dataOf('tool.called')[0]).toMatchObject({ tool: 'nodes.invoke', source: 'platform', node: 'mac', command: 'node.listDir' });
    await pipeline.call(callOf('n2', 'callValue', { tool: 'nodes.list', input: {} }, 2), never);
    expect(log.dataOf('tool.called')[1]).not.toHaveProperty('node');
  });
});

function jestless(): Promise<never> {
  return Promise.reject(new Error('not called in this test'));
}
