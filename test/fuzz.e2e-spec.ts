import fc from 'fast-check';
import { CodeModeResultSchema } from '@codemode/contracts';
import { contractProblem, type FuzzAnswer } from './fuzz/contract-shapes';
import { inLanes, send } from './fuzz/fuzz-driver';
import { guestCell } from './fuzz/guest-cells';
import { mcpRequest, nodeRequest } from './fuzz/protocol-messages';
import { restRequest, type FuzzRequest } from './fuzz/rest-inputs';
import { TestStack } from './utils/test-stack';

/**
 * SPEC §17 "Soak and fuzz": seeded random inputs at the REST bodies and headers, the guest API,
 * the MCP messages of /mcp and the node protocol. No 500, no crash, no hang past the budget, no
 * answer outside the contract's shapes. `FUZZ_SEED` replays a run; `FUZZ_INPUTS` sizes it (the
 * short form here, `npm run fuzz` the full one).
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261129);
const INPUTS = Number(process.env.FUZZ_INPUTS ?? 10_000);
const OPS_PER_CELL = 50;
const BUDGET_MS = 30_000;
const LANES = 8;
/** A guest cell's own budget: its ops wait on short timers and core tools, on a loaded machine. */
const GUEST_TIMEOUT_MS = 5_000;

jest.setTimeout(Math.max(300_000, INPUTS * 60));

/** The inputs of one seed: the same seed always yields the same inputs, in the same order. */
function inputsOf(seed: number) {
  const sample = <T>(arb: fc.Arbitrary<T>, numRuns: number, offset: number): T[] =>
    numRuns > 0 ? fc.sample(arb, { seed: seed + offset, numRuns }) : [];
  return {
    rest: sample(restRequest, Math.round(INPUTS * 0.3), 0),
    mcp: sample(mcpRequest, Math.round(INPUTS * 0.15), 1),
    node: sample(nodeRequest, Math.round(INPUTS * 0.1), 2),
    cells: sample(guestCell(OPS_PER_CELL), Math.round((INPUTS * 0.45) / OPS_PER_CELL), 3),
  };
}

describe(`fuzz (seed ${SEED}, ${INPUTS} inputs; replay with FUZZ_SEED=${SEED} FUZZ_INPUTS=${INPUTS})`, () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ env: { CODEMODE_TIMEOUT_MS: '1000' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('never answers 5xx, never crashes or hangs, and answers in the contract shapes', async () => {
    const inputs = inputsOf(SEED);
    const failures: string[] = [];
    const byStatus: Record<string, number> = {};
    let sent = 0;
    const fail = (what: string, index: number, request: FuzzRequest, why: string, answer?: FuzzAnswer): void => {
      failures.push(
        `[seed ${SEED} ${what} #${index}] ${why}: ${request.method} ${request.path} ${JSON.stringify(request.headers)} ` +
          `body=${(request.body ?? '').slice(0, 300)} -> ${answer ? `${answer.status} ${answer.text.slice(0, 300)}` : 'nothing'}`,
      );
    };
    const exchange = async (what: string, request: FuzzRequest, index: number): Promise<FuzzAnswer | undefined> => {
      let answer: FuzzAnswer;
      try {
        answer = await send(stack.baseUrl, request, BUDGET_MS);
      } catch (error) {
        fail(what, index, request, String(error));
        return undefined;
      }
      sent += 1;
      byStatus[answer.status] = (byStatus[answer.status] ?? 0) + 1;
      const problem = contractProblem(request, answer);
      if (problem) fail(what, index, request, problem, answer);
      return answer;
    };

    const tookMs: Record<string, number> = {};
    const timed = async (part: string, work: () => Promise<void>): Promise<void> => {
      const start = Date.now();
      await work();
      tookMs[part] = Date.now() - start;
    };
    await timed('rest', () => inLanes(inputs.rest, LANES, async (request, i) => void (await exchange('rest', request, i))));
    await timed('mcp', () => inLanes(inputs.mcp, LANES, async (request, i) => void (await exchange('mcp', request, i))));
    await timed('node', () => inLanes(inputs.node, LANES, async (request, i) => void (await exchange('node', request, i))));

    const guest = { settled: 0, threw: 0, cells: {} as Record<string, number> };
    const guestStart = Date.now();
    await inLanes(inputs.cells, 2, async (cell, i) => {
      const sid = `fuzz-guest-${i}`;
      await stack.client().putSession(sid, { codeMode: { timeoutMs: GUEST_TIMEOUT_MS } });
      const request: FuzzRequest = {
        method: 'POST',
        path: `/v1/sessions/${sid}/exec`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: `fuzz guest ${i}`, code: cell.code }),
        expects: 'result',
      };
      const answer = await exchange('guest', request, i);
      if (!answer) return;
      const parsed = CodeModeResultSchema.safeParse(JSON.parse(answer.text));
      if (!parsed.success) return;
      const result = parsed.data;
      const outcome = result.status === 'failed' ? `failed ${result.code ?? '-'} ${result.failurePhase}` : result.status;
      guest.cells[outcome] = (guest.cells[outcome] ?? 0) + 1;
      // Every call is caught inside the cell: it completes, ends on a limit of the whole cell, or
      // parks on a timer still pending when its budget ran out (SPEC §3: a timer is a bridge call).
      const parkedOnTimer = result.status === 'waiting' && (result.pendingToolCalls ?? []).every((call) => call.method === 'sleep');
      if (result.status === 'completed') {
        const counts = result.value as { settled: number; threw: number };
        guest.settled += counts.settled;
        guest.threw += counts.threw;
      } else if (!parkedOnTimer && !(result.status === 'failed' && ['output_limit_exceeded', 'timeout'].includes(result.code ?? ''))) {
        fail('guest', i, request, `cell answered ${outcome}: ${result.status === 'failed' ? result.error : ''}`, answer);
      }
    });

    tookMs.guest = Date.now() - guestStart;
    const inputCount =
      inputs.rest.length +
      inputs.mcp.reduce((n, r) => n + r.messages, 0) +
      inputs.node.length +
      inputs.cells.reduce((n, c) => n + c.ops, 0);
    process.stdout.write(
      `fuzz seed ${SEED}: ${inputCount} inputs (${inputs.rest.length} REST, ${inputs.mcp.length} MCP requests, ` +
        `${inputs.node.length} node, ${inputs.cells.length} cells of ${OPS_PER_CELL} guest calls) in ${sent} requests; ` +
        `HTTP ${JSON.stringify(byStatus)}; guest calls ${guest.settled} settled, ${guest.threw} threw; cells ${JSON.stringify(guest.cells)}; ms ${JSON.stringify(tookMs)}\n`,
    );
    expect(failures.slice(0, 20)).toEqual([]);
    expect(inputCount).toBeGreaterThanOrEqual(INPUTS * 0.95);
    expect([stack.api.alive, ...stack.workers.map((w) => w.alive)]).toEqual([true, true]);
    expect((await fetch(`${stack.baseUrl}/health/ready`)).status).toBe(200);
  });
});
