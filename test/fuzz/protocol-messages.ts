import fc from 'fast-check';
import type { FuzzRequest } from './rest-inputs';
import { encodeSegment, fuzzJson, nastyString } from './rest-inputs';

/** Random JSON-RPC messages at `/mcp` (SPEC §14) and random node-protocol requests (SPEC §15). */

const MCP_METHODS = [
  'initialize',
  'notifications/initialized',
  'tools/list',
  'tools/call',
  'ping',
  'resources/list',
  'prompts/list',
  'logging/setLevel',
  'completion/complete',
  'notifications/cancelled',
];

const toolCallParams = fc.oneof(
  fc.record({
    name: fc.constantFrom('exec', 'wait', 'shell', ''),
    arguments: fc.oneof(
      fuzzJson,
      fc.record({
        title: nastyString(20),
        code: fc.constantFrom('return 1', 'throw 1', 'await yield_control(); return 2', '}{', 'return "\\u0000"'),
      }),
      fc.record({ runId: fc.oneof(nastyString(10), fc.constant('cm_00000000-0000-0000-0000-000000000000')) }),
    ),
  }),
  fuzzJson,
);

const mcpMessage: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fuzzJson, weight: 1 },
  {
    arbitrary: fc.record(
      {
        jsonrpc: fc.oneof(fc.constant('2.0'), fc.constantFrom('1.0', 2, null)),
        id: fc.oneof(fc.integer(), nastyString(6), fc.constant(null), fc.constant({})),
        method: fc.oneof({ arbitrary: fc.constantFrom(...MCP_METHODS), weight: 5 }, nastyString(12)),
        params: fc.oneof(
          toolCallParams,
          fc.record({ protocolVersion: fc.constantFrom('2025-06-18', '2024-11-05', 'x'), capabilities: fuzzJson, clientInfo: fuzzJson }),
          fuzzJson,
        ),
      },
      { requiredKeys: ['jsonrpc', 'method'] },
    ),
    weight: 6,
  },
);

/** One POST/GET/DELETE at `/mcp`: a message or a batch, under random MCP headers. */
export const mcpRequest: fc.Arbitrary<FuzzRequest & { messages: number }> = fc
  .tuple(
    fc.constantFrom('POST', 'POST', 'POST', 'POST', 'GET', 'DELETE'),
    fc.oneof({ arbitrary: mcpMessage.map((m) => [m]), weight: 5 }, fc.array(mcpMessage, { minLength: 1, maxLength: 4 })),
    fc.boolean(),
    fc.oneof(
      fc.constantFrom('fuzz-mcp', 'fuzz-mcp-2'),
      nastyString(8).map((s) => s.replace(/[^\x21-\x7e]/g, '')),
      fc.constant(undefined),
    ),
    fc.constantFrom('application/json, text/event-stream', 'application/json', 'text/event-stream', '*/*', undefined),
    fc.constantFrom('2025-06-18', '2025-03-26', '1999-01-01', undefined),
    fc.constantFrom('application/json', 'text/plain', undefined),
    fc.oneof(fc.constant(undefined), fc.constantFrom('not-a-session', '00000000-0000-0000-0000-000000000000')),
  )
  .map(([method, messages, batch, session, accept, version, type, mcpSession]) => {
    const headers: Record<string, string> = {};
    if (session) headers['x-codemode-session'] = session;
    if (accept) headers.accept = accept;
    if (version) headers['mcp-protocol-version'] = version;
    if (type) headers['content-type'] = type;
    if (mcpSession) headers['mcp-session-id'] = mcpSession;
    const body = method === 'POST' ? JSON.stringify(batch || messages.length > 1 ? messages : messages[0]) : undefined;
    return { method, path: '/mcp', headers, body, expects: 'any' as const, messages: messages.length };
  });

const nodeName = fc.oneof(fc.constantFrom('fz-node', 'fz-node-2', '', ' ', 'n'.repeat(65)), nastyString(10));
const commandName = fc.oneof(
  fc.constantFrom('device.status', 'fs.listDir', 'system.run', 'weather', '-bad', 'c'.repeat(129)),
  nastyString(8),
);

const connectBody = fc.oneof(
  fc.record(
    {
      name: nodeName,
      platform: fc.oneof(fc.constantFrom('linux', 'darwin'), nastyString(8)),
      commands: fc.oneof(fc.array(commandName, { maxLength: 5 }), fuzzJson),
      id: fc.oneof(fc.constant('nd_00000000'), nastyString(6)),
      secret: nastyString(10),
    },
    { requiredKeys: ['name'] },
  ),
  fuzzJson,
);

const resultBody = fc.oneof(
  fc.record(
    {
      invocationId: fc.oneof(fc.constant('inv_1'), nastyString(10)),
      ok: fc.oneof(fc.boolean(), fuzzJson),
      value: fuzzJson,
      error: fc.oneof(nastyString(20), fuzzJson),
    },
    { requiredKeys: ['invocationId', 'ok'] },
  ),
  fuzzJson,
);

/** One request of the node protocol: connect, results, list, remove. A 200 connect is a stream the driver closes. */
export const nodeRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  connectBody.map((b) => ({
    method: 'POST',
    path: '/v1/nodes/connect',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(b) ?? 'null',
    expects: 'any' as const,
  })),
  fc.tuple(fc.oneof(fc.constant('nd_00000000'), nastyString(8).map(encodeSegment)), resultBody).map(([id, b]) => ({
    method: 'POST',
    path: `/v1/nodes/${id}/results`,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(b) ?? 'null',
    expects: 'any' as const,
  })),
  fc
    .tuple(
      fc.constantFrom('GET', 'DELETE'),
      fc.oneof(
        fc.constant(''),
        nastyString(8).map((s) => `/${encodeSegment(s)}`),
      ),
    )
    .map(([method, tail]) => ({ method, path: `/v1/nodes${tail}`, headers: {}, expects: 'any' as const })),
);
