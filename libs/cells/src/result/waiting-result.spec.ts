import { buildWaitingResult } from './waiting-result';
import { emptyTelemetry } from './cell-result';

describe('buildWaitingResult', () => {
  const base = {
    runId: 'cm_00000000-0000-0000-0000-000000000001',
    limits: { maxOutputBytes: 65536 },
    restartSafe: false,
    telemetry: emptyTelemetry(),
    priorOutputBytes: 0,
  };

  it('lists only the unsettled calls, with tool and input when the call names them', () => {
    const { result } = buildWaitingResult({
      ...base,
      reason: 'pending_tools',
      output: [{ type: 'text', text: 'hi' }],
      pending: [
        { id: 'bridge:sleep:1', method: 'sleep', args: { ms: 5000 } },
        { id: 'bridge:callValue:2', method: 'callValue', args: { tool: 'ticket', input: { id: 7 } } },
      ],
    });
    expect(result).toEqual({
      status: 'waiting',
      runId: base.runId,
      reason: 'pending_tools',
      pendingToolCalls: [
        { id: 'bridge:sleep:1', method: 'sleep' },
        { id: 'bridge:callValue:2', method: 'callValue', tool: 'ticket', input: { id: 7 } },
      ],
      output: [{ type: 'text', text: 'hi' }],
      replaySafe: false,
      telemetry: emptyTelemetry(),
    });
  });

  it('names a pending MCP call MCP.<server>.<callable> with its object argument as input', () => {
    const { result } = buildWaitingResult({
      ...base,
      reason: 'pending_tools',
      output: [],
      pending: [
        {
          id: 'bridge:namespace:1',
          method: 'namespace',
          args: { server: 'a', tool: 'long-op', callableName: 'MCP.a.longOp', args: [{ duration: 5 }] },
        },
        { id: 'bridge:namespace:2', method: 'namespace', args: { server: 'b', tool: 'long-op', callableName: 'MCP.b.longOp', args: [] } },
      ],
    });
    expect(result.pendingToolCalls).toEqual([
      { id: 'bridge:namespace:1', method: 'namespace', tool: 'MCP.a.longOp', input: { duration: 5 } },
      { id: 'bridge:namespace:2', method: 'namespace', tool: 'MCP.b.longOp', input: {} },
    ]);
  });

  it('cuts output to what is left of the run budget after earlier calls', () => {
    const output = Array.from({ length: 20 }, (_, i) => ({ type: 'text' as const, text: `line ${i} ${'x'.repeat(40)}` }));
    const { result, outputBytes } = buildWaitingResult({
      ...base,
      limits: { maxOutputBytes: 1200 },
      priorOutputBytes: 700,
      reason: 'yield',
      output,
      pending: [],
    });
    expect(outputBytes).toBeLessThanOrEqual(500);
    expect(result.output?.at(-1)).toEqual({ type: 'text', text: '[output truncated]' });
    expect(result.pendingToolCalls).toBeUndefined();
    expect(result.reason).toBe('yield');
  });
});
