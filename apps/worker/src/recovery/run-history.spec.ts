import { SPEC_DEFAULT_LIMITS } from '@codemode/config';
import type { LoggedEvent } from '@codemode/events';
import type { ShellConfig } from '@codemode/contracts';
import { recordedSpec, runHistory } from './run-history';

const shell = (timeoutSeconds: number): ShellConfig => ({
  backgroundMs: 1000,
  timeoutSeconds,
  cleanupMs: 5000,
  maxOutputChars: 100,
  pendingMaxOutputChars: 50,
  inputWaitIdleMs: 200,
  notifyOnExit: true,
  notifyOnExitEmptySuccess: false,
});
const DEFAULTS = shell(1);
const cell = { title: 't', code: 'return 1', restartSafe: true, awaitResults: false, limits: { ...SPEC_DEFAULT_LIMITS } };
const requested = (data: Record<string, unknown>): LoggedEvent => ({
  id: '1-0',
  type: 'run.requested',
  runId: 'r1',
  at: '2026-12-02T00:00:00.000Z',
  data,
  epoch: 0,
});

describe('recordedSpec: the run’s spec from its log', () => {
  it('takes the whole spec from run.requested, whatever an older record says', () => {
    const history = runHistory([requested({ ...cell, shell: shell(30), agentId: 'a1' })]);
    expect(recordedSpec(history, { shell: shell(99), agentId: 'old' }, DEFAULTS)).toEqual({ ...cell, shell: shell(30), agentId: 'a1' });
  });

  it('keeps agents: true of run.requested (SPEC §15), which a recovered run then has', () => {
    const history = runHistory([requested({ ...cell, shell: shell(30), agentId: null, agents: true })]);
    expect(recordedSpec(history, null, DEFAULTS)).toEqual({ ...cell, shell: shell(30), agentId: null, agents: true });
  });

  it('a run.requested that records no agent says so: null is kept, not taken from elsewhere', () => {
    const history = runHistory([requested({ ...cell, shell: shell(30), agentId: null })]);
    expect(recordedSpec(history, { shell: shell(99), agentId: 'old' }, DEFAULTS)).toEqual({ ...cell, shell: shell(30), agentId: null });
  });

  it('a log of an older build (no shell, no agent) takes them from the older record, else the worker’s defaults', () => {
    const history = runHistory([requested(cell)]);
    expect(recordedSpec(history, { shell: shell(99), agentId: 'old' }, DEFAULTS)).toEqual({ ...cell, shell: shell(99), agentId: 'old' });
    expect(recordedSpec(history, null, DEFAULTS)).toEqual({ ...cell, shell: DEFAULTS, agentId: null });
  });

  it('answers null when the log has no readable run.requested', () => {
    expect(recordedSpec(runHistory([]), { shell: shell(99), agentId: 'old' }, DEFAULTS)).toBeNull();
    expect(recordedSpec(runHistory([requested({ title: 't' })]), null, DEFAULTS)).toBeNull();
  });
});
