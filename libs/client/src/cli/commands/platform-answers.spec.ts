import type { CodeModeResult, Event, RunView } from '@codemode/contracts';
import { CodeModeClient } from '../../codemode-client';
import { runCli } from '../cli';
import type { CliIo } from '../context';
import { isAfter } from './events';

const telemetry = {
  catalogSize: 0,
  sources: { openclaw: 0, mcp: 0, client: 1 },
  searchCount: 0,
  describeCount: 0,
  callCount: 1,
  counterScope: 'run',
  visibleTools: ['exec', 'wait'] as ['exec', 'wait'],
};
const asking: CodeModeResult = {
  status: 'waiting',
  runId: 'cm_1',
  reason: 'pending_tools',
  pendingToolCalls: [{ id: 'bridge:callValue:1', method: 'callValue', tool: 'ask', input: { q: 1 } }],
  replaySafe: false,
  telemetry,
};
const done: CodeModeResult = { status: 'completed', value: 42, replaySafe: false, telemetry };
const run = { runId: 'cm_1', createdAt: '2026-01-01T00:00:00.000Z' } as RunView;
const event = (id: string, type: Event['type'], data: Record<string, unknown> = {}, runId = 'cm_1'): Event => ({
  id,
  type,
  runId,
  at: '2026-01-01T00:00:00.000Z',
  data,
});
const calledAsk = (answeredBy?: 'platform') =>
  event('1767225600000-1', 'tool.called', {
    callId: 'bridge:callValue:1',
    tool: 'ask',
    source: 'client',
    inputBytes: 7,
    ...(answeredBy ? { answeredBy } : {}),
  });

function fakeIo(): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: { write: (text: string) => (io.out += text) },
    stderr: { write: (text: string) => (io.err += text) },
    readStdin: async () => 'return (await ask({ q: 1 })).n',
    readFile: async () => '',
    signal: new AbortController().signal,
  };
  return io;
}

describe('exec on a run only the platform can move (SPEC §18)', () => {
  afterEach(() => jest.restoreAllMocks());

  it('prints the pending calls and how to answer them, and exits 3 without calling wait', async () => {
    jest.spyOn(CodeModeClient.prototype, 'exec').mockResolvedValue(asking);
    jest.spyOn(CodeModeClient.prototype, 'getRun').mockResolvedValue(run);
    const events = jest
      .spyOn(CodeModeClient.prototype, 'events')
      .mockResolvedValue({ events: [event('1767225600000-0', 'run.requested'), calledAsk('platform')], next: null });
    const wait = jest.spyOn(CodeModeClient.prototype, 'wait').mockResolvedValue(asking);
    const io = fakeIo();
    expect(await runCli(['exec', '-', '-s', 's1'], {}, io)).toBe(3);
    expect(wait).not.toHaveBeenCalled();
    // The log is read from the run's request on.
    expect(events).toHaveBeenCalledWith('s1', { after: '1767225599999-0', limit: 1000 });
    expect(io.err).toBe(
      'waiting (pending_tools): run cm_1\n' +
        '  pending bridge:callValue:1 ask {"q":1}\n' +
        "run cm_1 waits for the platform's answers to the calls above; waiting again would answer the same.\n" +
        'Answer them with POST /v1/sessions/s1/runs/cm_1/tool-results, e.g.\n' +
        '  {"results":[{"id":"bridge:callValue:1","ok":true,"value":<the tool\'s answer>}]}\n' +
        '  ({"id":…,"ok":false,"error":"<message>"} for a failure), then resume with: codemode wait cm_1 -s s1\n',
    );
  });

  it('waits as before when a pending call is not the platform’s (a webhook call still running)', async () => {
    jest.spyOn(CodeModeClient.prototype, 'exec').mockResolvedValue(asking);
    jest.spyOn(CodeModeClient.prototype, 'getRun').mockResolvedValue(run);
    jest.spyOn(CodeModeClient.prototype, 'events').mockResolvedValue({ events: [calledAsk()], next: null });
    const wait = jest.spyOn(CodeModeClient.prototype, 'wait').mockResolvedValue(done);
    const io = fakeIo();
    expect(await runCli(['exec', '-', '-s', 's1'], {}, io)).toBe(0);
    expect(wait).toHaveBeenCalledTimes(1);
    expect(io.out).toBe('42\n');
  });
});

describe('events --follow --until (SPEC §18)', () => {
  afterEach(() => jest.restoreAllMocks());

  it('prints the past events but ends only at a new one of that type', async () => {
    const past = [event('1-0', 'run.requested'), event('2-0', 'run.completed')];
    const live = [event('3-0', 'run.requested', {}, 'cm_2'), event('4-0', 'run.completed', {}, 'cm_2'), event('5-0', 'run.requested')];
    jest.spyOn(CodeModeClient.prototype, 'events').mockResolvedValue({ events: past, next: null });
    const follow = jest.spyOn(CodeModeClient.prototype, 'followEvents').mockImplementation(async function* () {
      yield* [...past, ...live];
    });
    const io = fakeIo();
    expect(await runCli(['events', 's1', '--follow', '--until', 'run.completed', '--json'], {}, io)).toBe(0);
    expect(follow).toHaveBeenCalledWith('s1', expect.objectContaining({ after: undefined }));
    expect(
      io.out
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as Event).id),
    ).toEqual(['1-0', '2-0', '3-0', '4-0']);
  });

  it('with --after, every event it streams is new', async () => {
    const events = jest.spyOn(CodeModeClient.prototype, 'events');
    jest.spyOn(CodeModeClient.prototype, 'followEvents').mockImplementation(async function* () {
      yield* [event('2-0', 'run.completed'), event('3-0', 'run.requested')];
    });
    const io = fakeIo();
    expect(await runCli(['events', 's1', '-f', '--after', '1-0', '--until', 'run.completed', '--json'], {}, io)).toBe(0);
    expect(events).not.toHaveBeenCalled();
    expect(io.out.trim().split('\n')).toHaveLength(1);
  });

  it('orders stream ids by time, then sequence', () => {
    expect(isAfter('1700000000001-0', '1700000000000-9')).toBe(true);
    expect(isAfter('1700000000000-10', '1700000000000-9')).toBe(true);
    expect(isAfter('1700000000000-9', '1700000000000-9')).toBe(false);
    expect(isAfter('999-0', '1000-0')).toBe(false);
  });
});
