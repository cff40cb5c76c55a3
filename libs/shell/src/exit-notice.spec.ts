import type { ShellExitedData } from '@codemode/contracts';
import { exitNotice, type ExitNoticeInput } from './exit-notice';

const exited = (over: Partial<ShellExitedData> = {}): ShellExitedData => ({
  sessionId: 'warm-otter',
  scope: 'acme/session:s1',
  status: 'completed',
  exitCode: 0,
  exitSignal: null,
  timedOut: false,
  startedAt: 1,
  endedAt: 2,
  durationMs: 1,
  backgrounded: true,
  droppedChars: 0,
  ...over,
});

const input = (over: Partial<ExitNoticeInput> = {}): ExitNoticeInput => ({
  exited: exited(),
  tail: 'done\n',
  sessionId: 's1',
  agentId: null,
  shell: { notifyOnExit: true, notifyOnExitEmptySuccess: false },
  notifyUrl: 'https://hooks.example/exits',
  ...over,
});

describe('exitNotice', () => {
  it('is the SPEC §7 body for a background session that printed something', () => {
    expect(exitNotice(input({ agentId: 'agent-7' }))).toEqual({
      sessionId: 's1',
      agentId: 'agent-7',
      processSessionId: 'warm-otter',
      status: 'completed',
      exitCode: 0,
      tail: 'done\n',
    });
  });

  it('adds exitSignal and timedOut only when they say something', () => {
    const notice = exitNotice(
      input({ exited: exited({ status: 'failed', exitCode: null, exitSignal: 'SIGTERM', timedOut: true }), tail: '' }),
    );
    expect(notice).toEqual({
      sessionId: 's1',
      agentId: null,
      processSessionId: 'warm-otter',
      status: 'failed',
      exitCode: null,
      exitSignal: 'SIGTERM',
      timedOut: true,
      tail: '',
    });
  });

  it('is nothing without a notifyUrl, with notifyOnExit off, or for a foreground session', () => {
    expect(exitNotice(input({ notifyUrl: null }))).toBeNull();
    expect(exitNotice(input({ shell: { notifyOnExit: false, notifyOnExitEmptySuccess: true } }))).toBeNull();
    expect(exitNotice(input({ exited: exited({ backgrounded: false }) }))).toBeNull();
  });

  it('skips an empty successful exit unless notifyOnExitEmptySuccess; whitespace is empty', () => {
    expect(exitNotice(input({ tail: '' }))).toBeNull();
    expect(exitNotice(input({ tail: ' \n' }))).toBeNull();
    expect(exitNotice(input({ tail: '', shell: { notifyOnExit: true, notifyOnExitEmptySuccess: true } }))).toMatchObject({ tail: '' });
    // Not a success: notified though it printed nothing.
    expect(exitNotice(input({ tail: '', exited: exited({ exitCode: 3 }) }))).toMatchObject({ exitCode: 3 });
    expect(exitNotice(input({ tail: '', exited: exited({ status: 'failed', exitCode: 127 }) }))).toMatchObject({ status: 'failed' });
  });
});
