import type { CodeModeClient } from '@codemode/client';

/** Sequential `ls({})` calls in one cell of the nested-call measures. */
export const TOOL_CALLS_PER_CELL = 20;

/** The trivial exec a cell of calls is measured against. */
export const TRIVIAL_CODE = 'return 1+1';

/** One cell of TOOL_CALLS_PER_CELL sequential `ls({})` calls. */
export const NESTED_LS_CODE = `for (let i = 0; i < ${TOOL_CALLS_PER_CELL}; i++) await ls({}); return 1;`;

/** A cell of one `ls({})` call: what a cell that reads costs beyond a trivial exec (its claim, its end behind the read's events, the call). */
export const ONE_LS_CODE = 'await ls({}); return 1;';

const WARM_UP_PAIRS = 20;

/** Runs `code` as an exec of `sessionId` and answers how long it took, ms; anything but `completed` throws. */
export async function timedExec(client: CodeModeClient, sessionId: string, code: string): Promise<number> {
  const t = performance.now();
  const result = await client.exec(sessionId, { title: 'budget', code });
  const ms = performance.now() - t;
  if (result.status !== 'completed') throw new Error(`unexpected result ${JSON.stringify(result)}`);
  return ms;
}

/**
 * SPEC §17's nested core tool call over REST: a trivial exec and a cell of TOOL_CALLS_PER_CELL
 * `ls({})` calls, alternating in one session (so drift in machine load hits both alike), after
 * WARM_UP_PAIRS pairs; a call's cost is its cell's time over the trivial exec's beside it, per call.
 */
export async function measureNestedCalls(
  client: CodeModeClient,
  sessionId: string,
  samples: number,
): Promise<{ trivial: number[]; perToolCall: number[] }> {
  const trivial: number[] = [];
  const perToolCall = await overTrivial(client, sessionId, NESTED_LS_CODE, samples, (ms) => ms / TOOL_CALLS_PER_CELL, trivial);
  return { trivial, perToolCall };
}

/** A cell of one `ls({})` over the trivial exec beside it (ms), alternating as `measureNestedCalls` does. */
export function measureOneReadCell(client: CodeModeClient, sessionId: string, samples: number): Promise<number[]> {
  return overTrivial(client, sessionId, ONE_LS_CODE, samples, (ms) => ms);
}

/** `code`'s time over a trivial exec's, each pair run back to back after WARM_UP_PAIRS, as `per` scales it; the trivial times into `trivial`. */
async function overTrivial(
  client: CodeModeClient,
  sessionId: string,
  code: string,
  samples: number,
  per: (ms: number) => number,
  trivial: number[] = [],
): Promise<number[]> {
  const over: number[] = [];
  for (let i = 0; i < samples + WARM_UP_PAIRS; i += 1) {
    const plain = await timedExec(client, sessionId, TRIVIAL_CODE);
    const withCode = await timedExec(client, sessionId, code);
    if (i < WARM_UP_PAIRS) continue;
    trivial.push(plain);
    over.push(per(Math.max(0, withCode - plain)));
  }
  return over;
}
