import type { CodeModeResult, ShellAnswer } from '@codemode/contracts';
import { CodeModeApiError, CodeModeConnectionError } from '../errors';
import { CliInputError, UsageError } from './errors';
import { ExitCode, exitCodeForError, exitCodeForResult, exitCodeForShell } from './exit-codes';

const telemetry = {
  catalogSize: 0,
  sources: { openclaw: 0, mcp: 0, client: 0 },
  searchCount: 0,
  describeCount: 0,
  callCount: 0,
  counterScope: 'run',
  visibleTools: ['exec', 'wait'] as ['exec', 'wait'],
};

describe('exit codes', () => {
  it('maps results: completed and waiting 0, failed 1', () => {
    const results: [CodeModeResult, number][] = [
      [{ status: 'completed', value: 1, replaySafe: false, telemetry }, 0],
      [{ status: 'waiting', runId: 'cm_1', reason: 'yield', replaySafe: false, telemetry }, 0],
      [{ status: 'failed', error: 'x', failurePhase: 'guest', bridgeDispatchStarted: false, replaySafe: false, telemetry }, 1],
    ];
    for (const [result, code] of results) expect(exitCodeForResult(result)).toBe(code);
  });

  it('maps shell answers: exit 0 and backgrounded 0, non-zero exits and tool errors 1', () => {
    const finished = (status: 'completed' | 'failed', exitCode: number | null): ShellAnswer => ({
      text: '',
      details: { status, exitCode, aggregated: '', durationMs: 1, cwd: '/w' },
    });
    expect(exitCodeForShell(finished('completed', 0))).toBe(0);
    expect(exitCodeForShell(finished('completed', 3))).toBe(1);
    expect(exitCodeForShell(finished('failed', null))).toBe(1);
    expect(exitCodeForShell({ text: 'x', details: { status: 'failed' } })).toBe(1);
    expect(exitCodeForShell({ text: '', details: { status: 'running', sessionId: 'a', pid: 1, startedAt: 0, tail: '' } })).toBe(0);
  });

  it('maps errors: usage 2, everything else 1', () => {
    expect(exitCodeForError(new UsageError('x'))).toBe(ExitCode.usage);
    expect(exitCodeForError(new CliInputError('x'))).toBe(ExitCode.failed);
    expect(exitCodeForError(new CodeModeApiError(404, { error: 'nope', code: 'not_found' }))).toBe(ExitCode.failed);
    expect(exitCodeForError(new CodeModeConnectionError('http://h', 'refused'))).toBe(ExitCode.failed);
  });

  it('words connection failures with the URL and the socket-level reason', () => {
    const fetchError = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3000'), { code: 'ECONNREFUSED' }),
    });
    const error = CodeModeConnectionError.from('http://127.0.0.1:3000', fetchError) as Error;
    expect(error.message).toBe('cannot reach the Code Mode API at http://127.0.0.1:3000: connect ECONNREFUSED 127.0.0.1:3000');
    const abort = new DOMException('aborted', 'AbortError');
    expect(CodeModeConnectionError.from('http://h', abort)).toBe(abort);
  });
});
