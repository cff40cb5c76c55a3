import fc from 'fast-check';
import type { CodeModeClient } from '@codemode/client';
import { CodeModeResultSchema } from '@codemode/contracts';
import { NO_ANSWER_ERROR, RUN_BEING_RESUMED_ERROR, execPath, post, sleep, waitPath, type Exchange } from '../chaos/chaos-helpers';

/** The kinds of run the soak mixes (SPEC §17): each is one session's one exec and what follows it. */
export const SOAK_KINDS = ['exec', 'throw', 'park', 'core-tool', 'client-tool', 'shell', 'abort'] as const;
export type SoakKind = (typeof SOAK_KINDS)[number];

export interface SoakPlan {
  kind: SoakKind;
  /** The value the cell returns, so an answer can be told from another run's. */
  n: number;
}

/** Weighted so that the heavy kinds (a shell spawn, three calls of a client tool) stay a minority. */
export const soakPlan: fc.Arbitrary<SoakPlan> = fc.record({
  kind: fc.oneof(
    { arbitrary: fc.constant<SoakKind>('exec'), weight: 4 },
    { arbitrary: fc.constant<SoakKind>('throw'), weight: 1 },
    { arbitrary: fc.constant<SoakKind>('park'), weight: 3 },
    { arbitrary: fc.constant<SoakKind>('core-tool'), weight: 2 },
    { arbitrary: fc.constant<SoakKind>('client-tool'), weight: 2 },
    { arbitrary: fc.constant<SoakKind>('shell'), weight: 1 },
    { arbitrary: fc.constant<SoakKind>('abort'), weight: 1 },
  ),
  n: fc.integer({ min: 0, max: 1_000_000 }),
});

const CLIENT_TOOL = { name: 'soak_echo', description: 'Echoes its input back; answered by the soak as the client.' };

function codeOf(plan: SoakPlan): string {
  switch (plan.kind) {
    case 'exec':
      return `return ${plan.n};`;
    case 'throw':
      return `throw new Error("soak ${plan.n}");`;
    case 'park':
    case 'abort':
      return `await yield_control("soak"); return ${plan.n};`;
    case 'core-tool':
      return `const found = await catalog.search("ls"); const r = await ls({}); return [${plan.n}, found.length > 0, Array.isArray(r.entries)];`;
    case 'client-tool':
      return `const r = await soak_echo({ n: ${plan.n} }); return r.n;`;
    case 'shell':
      return `const r = await exec({ command: "echo ${plan.n}" }); return r.details.aggregated;`;
  }
}

/** What a run of this plan must end with when nothing went wrong around it. */
export function expectedValue(plan: SoakPlan): unknown {
  if (plan.kind === 'core-tool') return [plan.n, true, true];
  if (plan.kind === 'shell') return String(plan.n);
  return plan.kind === 'throw' || plan.kind === 'abort' ? undefined : plan.n;
}

const WAIT_TRIES = 40;

/** Answers a `wait` may give while the run's worker dies and another takes it over: asked again. */
function worthWaitingAgain(ex: Exchange, runId: string): boolean {
  if (ex.kind !== 'answer') return true;
  const r = ex.result;
  if (r.status === 'waiting') return r.runId === runId;
  if (r.status === 'completed') return false;
  return r.error === NO_ANSWER_ERROR || r.error === RUN_BEING_RESUMED_ERROR || r.code === 'runtime_unavailable';
}

async function waitUntilSettled(client: CodeModeClient, sid: string, runId: string, answers: Exchange[]): Promise<void> {
  for (let i = 0; i < WAIT_TRIES; i += 1) {
    const ex = await post(client, waitPath(sid), { runId });
    answers.push(ex);
    if (!worthWaitingAgain(ex, runId)) return;
    await sleep(250);
  }
}

async function abort(client: CodeModeClient, sid: string, runId: string): Promise<Exchange> {
  const res = await client.raw('DELETE', `/v1/sessions/${encodeURIComponent(sid)}/runs/${runId}`).catch((e: unknown) => e);
  if (res instanceof Error) return { kind: 'no_answer', error: res.message, at: Date.now() };
  const { status, body, text } = res as { status: number; body: unknown; text: string };
  // 409: the run had already ended (a worker took it over and ended it); the log says how.
  if (status === 409) return { kind: 'http_error', status, text, at: Date.now() };
  const parsed = CodeModeResultSchema.safeParse(body);
  if (status !== 200 || !parsed.success) return { kind: 'http_error', status, text: text.slice(0, 300), at: Date.now() };
  return { kind: 'answer', result: parsed.data, at: Date.now() };
}

/**
 * Drives one run of `plan` in session `sid` to its end the way a client would: exec, then the
 * wait, tool results or abort its kind calls for. Every exchange is returned, in order.
 */
export async function driveRun(client: CodeModeClient, sid: string, plan: SoakPlan): Promise<Exchange[]> {
  if (plan.kind === 'client-tool') await client.putTools(sid, [CLIENT_TOOL]);
  const answers: Exchange[] = [await post(client, execPath(sid), { title: `soak ${plan.kind}`, code: codeOf(plan) })];
  const first = answers[0];
  if (first.kind !== 'answer' || first.result.status !== 'waiting') return answers;
  const { runId } = first.result;
  if (plan.kind === 'abort') {
    answers.push(await abort(client, sid, runId));
    return answers;
  }
  // The client answers its own tools' calls; a yield is answered by the wait itself.
  const pending = (first.result.pendingToolCalls ?? []).filter((call) => call.method === 'callValue');
  if (pending.length > 0) {
    const recorded = await client
      .toolResults(
        sid,
        runId,
        pending.map((call) => ({ id: call.id, ok: true, value: call.input })),
      )
      .then(
        () => null,
        (error: unknown) => ({ kind: 'no_answer' as const, error: `tool-results: ${String(error)}`, at: Date.now() }),
      );
    // A refusal is a problem of its own; the wait still tells how the run ended.
    if (recorded) answers.push(recorded);
  }
  await waitUntilSettled(client, sid, runId, answers);
  return answers;
}
