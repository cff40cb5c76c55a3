import type { NodeConnectInput, NodeResultInput, NodeView } from '@codemode/contracts';
import type { Example } from './example';
import type { NODE_REQUEST_SCHEMAS, NODE_RESPONSE_SCHEMAS } from './node-schemas';

const NODE_ID = 'nd_5b1f0c9e-2a47-4d8e-9c61-0f3e8b2d7a14';
const connect: NodeConnectInput = { name: 'lab-mac', platform: 'darwin', commands: ['device.status', 'fs.listDir'] };
const node: NodeView = {
  id: NODE_ID,
  name: 'lab-mac',
  platform: 'darwin',
  connected: true,
  commands: ['device.status', 'fs.listDir'],
  connectedAt: '2026-01-15T10:00:00.000Z',
  lastSeenAt: '2026-01-15T10:00:05.000Z',
};
const answer: NodeResultInput = {
  invocationId: '7d0f3c2e-9a41-4b6e-8c2d-1f0e9d8c7b6a',
  ok: true,
  value: { hostname: 'lab-mac', platform: 'darwin', arch: 'arm64', uptimeSeconds: 86400 },
};

/** Examples of the SPEC §15 node bodies and answers (checked against their schemas like the others). */
export const NODE_EXAMPLES: Record<keyof typeof NODE_REQUEST_SCHEMAS | keyof typeof NODE_RESPONSE_SCHEMAS, Record<string, Example>> = {
  NodeConnectInput: {
    pair: { summary: 'Pair a node', value: connect },
    reconnect: { summary: 'Reconnect as itself', value: { ...connect, id: NODE_ID, secret: 'kq3Vd1x9c0m2JwQe7rT5yH8uPzL4bN6a' } },
  },
  NodeResultInput: { status: { summary: 'device.status answered', value: answer } },
  NodeList: { nodes: { summary: 'One connected node', value: { nodes: [node] } } },
  NodeDeleted: { deleted: { summary: 'Removed', value: { id: NODE_ID, deleted: true } } },
  NodeResultAccepted: { accepted: { summary: 'Delivered', value: { accepted: true } } },
};
