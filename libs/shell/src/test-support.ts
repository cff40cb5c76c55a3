import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ShellAnswer, ShellConfig, ShellSessionSummary } from '@codemode/contracts';
import { ProcessRegistry, type ProcessRegistryOptions } from './process-registry';
import type { ShellEvent } from './shell-events';

export const CONFIG: ShellConfig = {
  backgroundMs: 10_000,
  timeoutSeconds: 1800,
  cleanupMs: 1_800_000,
  maxOutputChars: 200_000,
  pendingMaxOutputChars: 30_000,
  inputWaitIdleMs: 15_000,
  notifyOnExit: true,
  notifyOnExitEmptySuccess: false,
};

export function makeRegistry(opts: Partial<ProcessRegistryOptions> = {}) {
  const events: ShellEvent[] = [];
  const workspaceRoot = mkdtempSync(path.join(tmpdir(), 'shell-spec-'));
  const registry = new ProcessRegistry({
    defaults: CONFIG,
    workspaceRoot,
    baseEnv: { PATH: '/usr/local/bin:/usr/bin:/bin' },
    onEvent: (e) => events.push(e),
    ...opts,
  });
  return { registry, events, workspaceRoot };
}

/** Answer details as tests read them: every field reachable without narrowing the union. */
export interface LooseDetails {
  [key: string]: unknown;
  status: string;
  sessionId: string;
  sessions: ShellSessionSummary[];
}
export const details = (answer: ShellAnswer) => answer.details as unknown as LooseDetails;

/** The data of every `shell.output` event. */
export const outputEvents = (events: ShellEvent[]) => events.flatMap((e) => (e.type === 'shell.output' ? [e.data] : []));

export async function waitFor(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new RangeError('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Command lines of live processes whose command line contains `marker`. */
export function processesMatching(marker: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,pgid,stat,cmd'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(marker) && !/\sZ/.test(line) && !line.includes('ps -eo'));
}

/** Polls until the session reports its exit; returns every poll's text joined and the last answer. */
export async function pollUntilExit(registry: ProcessRegistry, scope: string, sessionId: string, ms = 5000) {
  const deadline = Date.now() + ms;
  let text = '';
  for (;;) {
    const answer = await registry.process(scope, { action: 'poll', sessionId, timeout: 1000 }, CONFIG);
    text += `${answer.text}\n`;
    if (details(answer).status !== 'running') return { text, answer };
    if (Date.now() > deadline) throw new RangeError(`session ${sessionId} did not exit in time`);
  }
}
