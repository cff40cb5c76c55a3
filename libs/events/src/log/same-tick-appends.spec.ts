import { MessageChannel } from 'node:worker_threads';
import type { SessionRef } from '@codemode/contracts';
import { StaleEpochError, StoreCommandError } from '../platform/errors';
import type { AppendInput, EventLog } from './event-log';
import { SameTickAppends } from './same-tick-appends';

const ref: SessionRef = { tenant: 'acme', sessionId: 's-1' };
const output = (text: string): AppendInput => ({ type: 'run.output', runId: 'cm_1', epoch: 1, data: { text } });
const texts = (inputs: readonly AppendInput[]) => inputs.map((input) => (input.data as { text: string }).text);

/** A log that records how it was asked to write, answering each event with `id-<text>` unless told otherwise. */
class RecordingLog implements Pick<EventLog, 'append' | 'appendAll'> {
  readonly writes: string[][] = [];
  refuse = new Set<string>();
  failAll: Error | null = null;

  append(_ref: SessionRef, input: AppendInput): Promise<{ eventId: string }> {
    this.writes.push(['append', ...texts([input])]);
    if (this.failAll) return Promise.reject(this.failAll);
    const [outcome] = this.answer([input]);
    return outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome);
  }

  appendAll(_ref: SessionRef, inputs: readonly AppendInput[]): ReturnType<EventLog['appendAll']> {
    this.writes.push(['appendAll', ...texts(inputs)]);
    return this.failAll ? Promise.reject(this.failAll) : Promise.resolve(this.answer(inputs));
  }

  private answer(inputs: readonly AppendInput[]) {
    return texts(inputs).map((text) => (this.refuse.has(text) ? new StaleEpochError('cm_1', 1, 2) : { eventId: `id-${text}` }));
  }
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

test('appends asked for in one turn of the event loop are one appendAll, in the order asked', async () => {
  const log = new RecordingLog();
  const appends = new SameTickAppends(log, ref);

  const answers = Promise.all(['a', 'b', 'c'].map((text) => appends.append(output(text))));
  expect(log.writes).toEqual([]);

  expect(await answers).toEqual([{ eventId: 'id-a' }, { eventId: 'id-b' }, { eventId: 'id-c' }]);
  expect(log.writes).toEqual([['appendAll', 'a', 'b', 'c']]);
});

test('appends asked for across callbacks of one turn (as bridge messages arrive) still share one write', async () => {
  const log = new RecordingLog();
  const appends = new SameTickAppends(log, ref);
  const answers: Promise<unknown>[] = [];
  // Two bridge messages already queued on a real MessagePort: Node delivers them in one turn, each
  // callback with its microtasks drained before the next. (Two setTimeout(0) callbacks, as this
  // test had it, may fall in two turns when a millisecond ticks between them: a flake under load.)
  const { port1, port2 } = new MessageChannel();
  await new Promise<void>((resolve) => {
    port2.on('message', (text: string) => {
      void Promise.resolve().then(() => answers.push(appends.append(output(text))));
      if (text === 'b') resolve();
    });
    port1.postMessage('a');
    port1.postMessage('b');
  });
  port2.close();
  await Promise.all(answers);
  expect(log.writes).toEqual([['appendAll', 'a', 'b']]);
});

test('an append alone in its turn is a plain append; appends in later turns are written separately', async () => {
  const log = new RecordingLog();
  const appends = new SameTickAppends(log, ref);

  expect(await appends.append(output('a'))).toEqual({ eventId: 'id-a' });
  await nextTurn();
  await Promise.all([appends.append(output('b')), appends.append(output('c'))]);

  expect(log.writes).toEqual([
    ['append', 'a'],
    ['appendAll', 'b', 'c'],
  ]);
});

test('a batch is at most 16 events: the 17th goes in a second write, after the first', async () => {
  const log = new RecordingLog();
  const appends = new SameTickAppends(log, ref);
  const names = Array.from({ length: 17 }, (_, i) => `e${i}`);

  await Promise.all(names.map((text) => appends.append(output(text))));

  expect(log.writes).toEqual([
    ['appendAll', ...names.slice(0, 16)],
    ['append', 'e16'],
  ]);
});

test('each caller gets its own event\u2019s refusal; a failed write rejects every caller of its batch', async () => {
  const log = new RecordingLog();
  const appends = new SameTickAppends(log, ref);
  log.refuse.add('b');

  const settled = await Promise.allSettled(['a', 'b', 'c'].map((text) => appends.append(output(text))));
  expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(StaleEpochError);

  log.failAll = new StoreCommandError('connection lost');
  const failed = await Promise.allSettled(['d', 'e'].map((text) => appends.append(output(text))));
  expect(failed.map((s) => s.status === 'rejected' && (s.reason as Error).message)).toEqual([
    'store command failed: connection lost',
    'store command failed: connection lost',
  ]);
});
