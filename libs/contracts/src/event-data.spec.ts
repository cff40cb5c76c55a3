import { decodeEventData, EVENT_DATA_SCHEMAS, platformSettledData, settledOutcome, toolSettledData, type TypedEvent } from './event-data';
import { EVENT_TYPES } from './events';

const worker = { callId: 'bridge:callValue:1', tool: 'lookup', durationMs: 12 };
const failure = { ok: false, error: { name: 'TypeError', message: 'x'.repeat(1200) } } as const;

describe('EVENT_DATA_SCHEMAS', () => {
  it('has one schema per event type', () => {
    expect(Object.keys(EVENT_DATA_SCHEMAS).sort()).toEqual([...EVENT_TYPES].sort());
  });
});

describe('TypedEvent', () => {
  it("types an event's data by its type", () => {
    const reasonOf = (event: TypedEvent): string | null =>
      event.type === 'run.expired' || event.type === 'run.released' ? event.data.reason : null;
    const at = new Date(0).toISOString();
    expect(reasonOf({ id: '1-0', type: 'run.expired', runId: 'cm_x', at, data: { reason: 'idle' } })).toBe('idle');
    expect(reasonOf({ id: '2-0', type: 'tool.blocked', runId: 'cm_x', at, data: { callId: 'bridge:callValue:1', tool: 'rm' } })).toBeNull();
  });
});

describe('toolSettledData: the one encoder of tool.settled', () => {
  it('writes what the worker wrote before, field for field and in order', () => {
    expect(JSON.stringify(toolSettledData(worker, { ok: true, value: { é: 1 } }, true))).toBe(
      '{"callId":"bridge:callValue:1","tool":"lookup","ok":true,"durationMs":12,"resultBytes":8,"result":{"é":1}}',
    );
    expect(JSON.stringify(toolSettledData(worker, { ok: true, value: undefined }, true))).toBe(
      '{"callId":"bridge:callValue:1","tool":"lookup","ok":true,"durationMs":12,"resultBytes":4,"result":null}',
    );
    expect(toolSettledData(worker, { ok: true, value: 5 }, false)).toEqual({ ...worker, ok: true, resultBytes: 1 });
    const failed = toolSettledData(worker, failure, true);
    expect(failed).toEqual({ ...worker, ok: false, error: 'x'.repeat(1000), failure: failure.error });
    expect(Object.keys(failed)).toEqual(['callId', 'tool', 'ok', 'durationMs', 'error', 'failure']);
    expect(toolSettledData(worker, failure, false)).toEqual({ ...worker, ok: false, error: 'x'.repeat(1000) });
  });

  it('writes a platform answer as before', () => {
    expect(JSON.stringify(platformSettledData({ id: 'bridge:callValue:2', ok: true, value: { n: 41 } }, true))).toBe(
      '{"callId":"bridge:callValue:2","ok":true,"source":"client","answeredBy":"platform","result":{"n":41}}',
    );
    expect(JSON.stringify(platformSettledData({ id: 'bridge:callValue:2', ok: false, error: 'nope' }, true))).toBe(
      '{"callId":"bridge:callValue:2","ok":false,"source":"client","answeredBy":"platform","failure":{"name":"Error","message":"nope"}}',
    );
    expect(platformSettledData({ id: 'bridge:callValue:2', ok: true }, false)).toEqual({
      callId: 'bridge:callValue:2',
      ok: true,
      source: 'client',
      answeredBy: 'platform',
    });
  });
});

describe('settledOutcome: the one decoder of a tool.settled outcome', () => {
  it('reads back what the encoder kept, as the log holds it', () => {
    const stored = (data: unknown) => decodeEventData('tool.settled', JSON.parse(JSON.stringify(data)));
    const ok = stored(toolSettledData(worker, { ok: true, value: [1] }, true));
    expect(ok && settledOutcome(ok)).toEqual({ ok: true, value: [1] });
    const none = stored(toolSettledData(worker, { ok: true, value: undefined }, true));
    expect(none && settledOutcome(none)).toEqual({ ok: true, value: null });
    const rejected = stored(toolSettledData(worker, failure, true));
    expect(rejected && settledOutcome(rejected)).toEqual(failure);
    const platform = stored(platformSettledData({ id: 'bridge:callValue:2', ok: false, error: { message: 'm', name: 'E' } }, true));
    expect(platform && settledOutcome(platform)).toEqual({ ok: false, error: { name: 'E', message: 'm' } });
  });

  it('answers null when the outcome was not kept', () => {
    expect(settledOutcome(toolSettledData(worker, { ok: true, value: 1 }, false))).toBeNull();
    expect(settledOutcome(toolSettledData(worker, failure, false))).toBeNull();
    expect(settledOutcome(platformSettledData({ id: 'bridge:callValue:2', ok: true }, false))).toBeNull();
  });
});

describe('decodeEventData', () => {
  it('answers null for data its type does not describe, without throwing', () => {
    const settled = toolSettledData(worker, { ok: true, value: 1 }, true);
    expect(decodeEventData('tool.settled', { ...settled, callId: undefined })).toBeNull();
    expect(decodeEventData('tool.settled', { ...settled, ok: 'yes' })).toBeNull();
    expect(decodeEventData('tool.settled', { ...settled, tool: undefined })).toBeNull();
    expect(decodeEventData('tool.settled', 'not an object')).toBeNull();
    expect(decodeEventData('tool.called', { callId: 'bridge:callValue:1', tool: 'lookup' })).toBeNull();
    expect(decodeEventData('run.requested', { title: 't', code: 'c', restartSafe: false, awaitResults: false })).toBeNull();
    const parked = { result: { status: 'waiting' }, expiresAt: '2030-01-01T00:00:00.000Z', snapshotBytes: 1 };
    expect(decodeEventData('run.parked', parked)).toEqual(parked);
    expect(decodeEventData('run.parked', { ...parked, journal: { calls: 'none' } })).toBeNull();
    expect(decodeEventData('run.parked', { ...parked, result: { status: 'completed' } })).toBeNull();
    expect(decodeEventData('run.completed', {})).toBeNull();
    expect(decodeEventData('run.output', null)).toBeNull();
  });

  it('answers the data its type describes, optional fields absent', () => {
    const called = { callId: 'bridge:callValue:1', tool: 'lookup', source: 'client', inputBytes: 2 };
    expect(decodeEventData('tool.called', called)).toEqual(called);
    expect(decodeEventData('run.lost', { reason: 'gone' })).toEqual({ reason: 'gone' });
    expect(decodeEventData('exec.rejected', { call: 'wait', input: null, result: { status: 'failed' } })).toEqual({
      call: 'wait',
      input: null,
      result: { status: 'failed' },
    });
  });
});
