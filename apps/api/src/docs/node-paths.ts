import { body, errors, ok, param, type PathItem } from './openapi-builders';

const STREAM_EXAMPLE =
  'event: paired\ndata: {"id":"nd_5b1f0c9e-2a47-4d8e-9c61-0f3e8b2d7a14","secret":"kq3Vd1x9c0m2JwQe7rT5yH8uPzL4bN6a"}\n\n' +
  'event: invoke\ndata: {"invocationId":"7d0f3c2e-9a41-4b6e-8c2d-1f0e9d8c7b6a","command":"device.status","params":{},"timeoutMs":9000}\n\n';

/** The routes of SPEC §15's paired nodes (NodesController). */
export function nodePaths(): Record<string, PathItem> {
  return {
    '/v1/nodes': {
      get: {
        operationId: 'listNodes',
        tags: ['nodes'],
        summary: "The tenant's paired nodes",
        description: "Connected or not, by name. Another tenant's nodes are never listed.",
        responses: { '200': ok('`{nodes: [...]}`.', 'NodeList'), ...errors(401, 503) },
      },
    },
    '/v1/nodes/connect': {
      post: {
        operationId: 'connectNode',
        tags: ['nodes'],
        summary: "A node's long-lived connection",
        description:
          'Pairs the node (or, with the `id` and `secret` it was paired with, re-establishes it) and answers with `text/event-stream`: ' +
          'first `event: paired` `{id, secret}`, then one `event: invoke` `{invocationId, command, params, timeoutMs}` per invocation, ' +
          "answered with `POST /v1/nodes/{id}/results`. Holds one of the tenant's stream slots. 409 when a connected node has the name, " +
          'or the tenant has 32 nodes; 403 when an agent key asks for the name of a node an operator key paired (to pair it, or to ' +
          'rename its own node onto it). `codemode node` is the reference node.',
        requestBody: body('NodeConnectInput'),
        responses: {
          '200': {
            description: 'The invocation stream (`text/event-stream`).',
            content: { 'text/event-stream': { schema: { type: 'string' }, example: STREAM_EXAMPLE } },
          },
          ...errors(400, 401, 403, 409, 413, 429, 503),
        },
      },
    },
    '/v1/nodes/{id}/results': {
      parameters: [param('NodeId')],
      post: {
        operationId: 'answerNodeInvocation',
        tags: ['nodes'],
        summary: "A node's answer to one invocation",
        description:
          'To any API instance; 409 when no invocation of this node waits for it (unknown, answered already, or timed out). At most 1 MiB.',
        requestBody: body('NodeResultInput'),
        responses: { '202': ok('Delivered to the waiting call.', 'NodeResultAccepted'), ...errors(400, 401, 409, 413, 503) },
      },
    },
    '/v1/nodes/{id}': {
      parameters: [param('NodeId')],
      delete: {
        operationId: 'removeNode',
        tags: ['nodes'],
        summary: 'Unpair a node',
        description: 'Its connection, if open, is closed; a node that connects again is paired anew. Operator keys only.',
        responses: { '200': ok('Removed.', 'NodeDeleted'), ...errors(400, 401, 403, 404, 503) },
      },
    },
  };
}
