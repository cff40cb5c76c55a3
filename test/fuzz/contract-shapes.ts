import { CodeModeResultSchema } from '@codemode/contracts';
import { z } from 'zod';

/** What came back for one fuzz request. */
export interface FuzzAnswer {
  status: number;
  contentType: string;
  text: string;
}

/** SPEC §2: every other route answers bad input as `{error, code, details?}`. */
const RestErrorSchema = z.object({ error: z.string(), code: z.string(), details: z.unknown().optional() });

/** A JSON-RPC 2.0 response (SPEC §14 speaks MCP over it). */
const JsonRpcResponseSchema = z.union([
  z.object({ jsonrpc: z.literal('2.0'), id: z.unknown(), result: z.record(z.string(), z.unknown()) }),
  z.object({ jsonrpc: z.literal('2.0'), id: z.unknown().optional(), error: z.object({ code: z.number(), message: z.string() }) }),
]);

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

/** The JSON-RPC messages of an MCP answer: a JSON body (one or a batch), or the `data:` lines of an SSE body. */
function jsonRpcMessages(answer: FuzzAnswer): unknown[] {
  if (answer.contentType.includes('text/event-stream')) {
    return answer.text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => parse(line.slice(5).trim()));
  }
  const body = parse(answer.text);
  return Array.isArray(body) ? body : [body];
}

/** An exec/wait answered over MCP carries the CodeModeResult as its structuredContent (SPEC §14). */
function mcpToolResultProblem(message: unknown): string | null {
  const result = (message as { result?: { structuredContent?: unknown; isError?: unknown } }).result;
  if (result?.structuredContent === undefined) return null;
  return CodeModeResultSchema.safeParse(result.structuredContent).success ? null : 'structuredContent is not a CodeModeResult';
}

/**
 * Why an answer is outside the contract, or null when it is inside: never a 5xx; exec/wait always
 * 200 with a CodeModeResult (404 for a session id the route cannot name); other routes' errors
 * `{error, code}`; `/mcp` answers JSON-RPC.
 */
export function contractProblem(request: { path: string; expects: 'result' | 'any' }, answer: FuzzAnswer): string | null {
  if (answer.status >= 500) return `HTTP ${answer.status}`;
  if (request.expects === 'result') {
    if (answer.status === 404) return null;
    if (answer.status !== 200) return `exec/wait answered HTTP ${answer.status}`;
    return CodeModeResultSchema.safeParse(parse(answer.text)).success ? null : 'not a CodeModeResult';
  }
  if (request.path.startsWith('/mcp')) {
    if (answer.status === 202 || answer.text === '') return null;
    if (answer.status >= 400 && RestErrorSchema.safeParse(parse(answer.text)).success) return null;
    for (const message of jsonRpcMessages(answer)) {
      if (!JsonRpcResponseSchema.safeParse(message).success) return 'not a JSON-RPC response';
      const problem = mcpToolResultProblem(message);
      if (problem) return problem;
    }
    return null;
  }
  if (answer.status >= 400 && answer.contentType.includes('application/json')) {
    return RestErrorSchema.safeParse(parse(answer.text)).success ? null : `HTTP ${answer.status} without {error, code}`;
  }
  return null;
}
