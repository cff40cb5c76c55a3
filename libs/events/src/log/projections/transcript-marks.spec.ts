import { StoreCommandError } from '../../platform/errors';
import type { LoggedEvent } from '../event-encoding';
import { entryOfMark, readTranscriptElement } from './transcript-marks';

const event = (type: LoggedEvent['type'], data: Record<string, unknown>, runId?: string): LoggedEvent => ({
  id: '1764900000000-3',
  type,
  ...(runId ? { runId } : {}),
  at: '2026-12-05T02:00:00.000Z',
  data,
  epoch: 1,
});

test('a mark names its kind, call and event; an earlier release entry is read as it is', () => {
  expect(readTranscriptElement('iw1764900000000-3')).toEqual({ mark: { kind: 'input', call: 'wait', eventId: '1764900000000-3' } });
  expect(readTranscriptElement('re1-0')).toEqual({ mark: { kind: 'result', call: 'exec', eventId: '1-0' } });
  const entry = { kind: 'input', call: 'exec', runId: null, at: 'a', input: { x: 1 } };
  expect(readTranscriptElement(JSON.stringify(entry))).toEqual({ entry });
});

test('anything else is a store error, not a wrong entry', () => {
  for (const bad of ['xe1-0', 'iq1-0', 'ie', '{"kind":']) expect(() => readTranscriptElement(bad)).toThrow(StoreCommandError);
});

test('an exec input is the cell fields of run.requested, in the order the list kept them; other entries are the data verbatim', () => {
  const requested = event('run.requested', { limits: {}, code: 'return 1', awaitResults: true, title: 't', restartSafe: false }, 'cm_1');
  const input = entryOfMark({ kind: 'input', call: 'exec', eventId: requested.id }, requested);
  expect(JSON.stringify(input)).toBe(
    '{"kind":"input","call":"exec","runId":"cm_1","at":"2026-12-05T02:00:00.000Z","input":{"title":"t","code":"return 1","restartSafe":false,"awaitResults":true}}',
  );
  const resumed = event('run.resumed', { workerId: 'w', epoch: 1, input: { runId: 'cm_1' } }, 'cm_1');
  expect(entryOfMark({ kind: 'input', call: 'wait', eventId: resumed.id }, resumed)).toEqual({
    kind: 'input',
    call: 'wait',
    runId: 'cm_1',
    at: resumed.at,
    input: { runId: 'cm_1' },
  });
  const rejected = event('exec.rejected', { call: 'wait', input: 7, result: { status: 'failed' } });
  expect(entryOfMark({ kind: 'result', call: 'wait', eventId: rejected.id }, rejected)).toEqual({
    kind: 'result',
    call: 'wait',
    runId: null,
    at: rejected.at,
    result: { status: 'failed' },
  });
});
