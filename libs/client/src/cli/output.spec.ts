import type { CodeModeResult, Event } from '@codemode/contracts';
import { renderEvent, renderJson, renderResult, renderShell, renderTools } from './output';

const telemetry = {
  catalogSize: 0,
  sources: { openclaw: 0, mcp: 0, client: 0 },
  searchCount: 0,
  describeCount: 0,
  callCount: 0,
  counterScope: 'run',
  visibleTools: ['exec', 'wait'] as ['exec', 'wait'],
};
const base = { replaySafe: false, telemetry };

describe('output rendering', () => {
  it('prints output entries (text as is, json pretty) and then the value', () => {
    const result: CodeModeResult = {
      ...base,
      status: 'completed',
      value: { a: [1] },
      warnings: ['slow'],
      output: [
        { type: 'text', text: 'hi' },
        { type: 'json', value: { b: 2 } },
      ],
    };
    expect(renderResult(result)).toEqual({ stdout: 'hi\n{\n  "b": 2\n}\n{\n  "a": [\n    1\n  ]\n}\n', stderr: 'warning: slow\n' });
    expect(renderResult({ ...base, status: 'completed', value: undefined }).stdout).toBe('null\n');
  });

  it('sends a failure to stderr with its code and phase, after the output', () => {
    const result: CodeModeResult = {
      ...base,
      status: 'failed',
      error: 'RangeError: boom',
      code: 'internal_error',
      failurePhase: 'guest',
      bridgeDispatchStarted: false,
      output: [{ type: 'text', text: 'before' }],
    };
    expect(renderResult(result)).toEqual({ stdout: 'before\n', stderr: 'error (internal_error, guest): RangeError: boom\n' });
  });

  it('describes a waiting result with its reason and pending calls', () => {
    const result: CodeModeResult = {
      ...base,
      status: 'waiting',
      runId: 'cm_1',
      reason: 'pending_tools',
      pendingToolCalls: [{ id: 'bridge:callValue:1', method: 'callValue', tool: 'lookup', input: { id: 7 } }],
    };
    expect(renderResult(result)).toEqual({
      stdout: '',
      stderr: 'waiting (pending_tools): run cm_1\n  pending bridge:callValue:1 lookup {"id":7}\n',
    });
  });

  it('prints one line per event and cuts long data', () => {
    const event: Event = { id: '1-0', type: 'run.started', runId: 'cm_1', at: 't', data: { workerId: 'w' } };
    expect(renderEvent(event)).toBe('1-0 run.started cm_1 {"workerId":"w"}\n');
    expect(renderEvent({ id: '2-0', type: 'tools.registered', at: 't', data: {} })).toBe('2-0 tools.registered {}\n');
    const long = renderEvent({ ...event, data: { code: 'x'.repeat(1000) } });
    expect(long.length).toBeLessThan(400);
    expect(long.endsWith('…\n')).toBe(true);
  });

  it('prints shell text, and tool-level errors on stderr', () => {
    expect(renderShell({ text: 'hi', details: { status: 'completed', exitCode: 0, aggregated: 'hi', durationMs: 1, cwd: '/w' } })).toEqual({
      stdout: 'hi\n',
      stderr: '',
    });
    expect(renderShell({ text: 'cannot be detached', details: { status: 'failed' } })).toEqual({
      stdout: '',
      stderr: 'error: cannot be detached\n',
    });
  });

  it('lists tools one a line and prints JSON compactly', () => {
    const view = {
      execDescription: '',
      catalog: [
        { callableName: 'a', toolName: 'a', description: 'first\nsecond', source: 'client' as const, replaySafe: false },
        { callableName: 'longer', toolName: 'longer', description: '', source: 'openclaw' as const, replaySafe: true },
      ],
    };
    expect(renderTools(view)).toBe('a       client    first\nlonger  openclaw\n');
    expect(renderTools({ execDescription: '', catalog: [] })).toBe('(no tools)\n');
    expect(renderJson({ a: 1 })).toBe('{"a":1}\n');
  });
});
