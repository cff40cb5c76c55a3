import type { Redis } from 'ioredis';
import { NODE_LIMITS, nodeErrors, type NodeAnswer } from '@codemode/contracts';
import { createRedis, KeySpace, RunReplies } from '@codemode/events';
import { NodeCallError, NodeCalls } from './node-calls';
import { closeMessages, NodeRegistry, type NodeHold } from './node-registry';
import { fleetScripts } from './scripts';
import { deleteKeys, testPrefix, testRedis } from './test-support';
import { TEST_REDIS_URL } from '../../../test/utils/redis-test-keys';

const prefix = testPrefix('nodes');
const keys = new KeySpace(prefix);
let redis: Redis;
let registry: NodeRegistry;
let calls: NodeCalls;

beforeAll(async () => {
  redis = await testRedis('node-registry');
  registry = new NodeRegistry(redis, keys, fleetScripts());
  calls = new NodeCalls(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

const lab = { name: 'lab', platform: 'linux', commands: ['device.status', 'fs.listDir'] };

function held(result: Awaited<ReturnType<NodeRegistry['connect']>>): NodeHold {
  if ('kind' in result) throw new Error(`refused: ${result.kind}`);
  return result;
}

describe('NodeRegistry', () => {
  it('pairs a node, lists it connected, and shows it disconnected once its connection drops', async () => {
    const hold = held(await registry.connect('t1', lab));
    expect(hold.nodeId).toMatch(/^nd_[0-9a-f-]{36}$/);

    const [node] = await registry.list('t1');
    expect(node).toMatchObject({ id: hold.nodeId, name: 'lab', platform: 'linux', connected: true, commands: lab.commands });
    expect(await registry.list('t2')).toEqual([]);

    await registry.drop('t1', hold);
    expect((await registry.list('t1'))[0].connected).toBe(false);
    await registry.remove('t1', hold.nodeId);
  });

  it('refuses a second connection under a connected name, unless it presents the node id and secret', async () => {
    const first = held(await registry.connect('t3', lab));
    expect(await registry.connect('t3', lab)).toEqual({ kind: 'held' });
    expect(await registry.connect('t3', { ...lab, id: first.nodeId, secret: 'not-the-secret-at-all' })).toEqual({ kind: 'held' });

    const again = held(await registry.connect('t3', { ...lab, id: first.nodeId, secret: first.secret }));
    expect(again.nodeId).toBe(first.nodeId);
    // The first connection no longer holds the node: its beat says so, and its drop changes nothing.
    expect(await registry.beat('t3', first)).toBe(false);
    await registry.drop('t3', first);
    expect((await registry.list('t3'))[0].connected).toBe(true);
    expect(await registry.beat('t3', again)).toBe(true);
  });

  it('gives a restarted node (same name, not connected) its old id and a new secret', async () => {
    const first = held(await registry.connect('t4', lab));
    await registry.drop('t4', first);
    const second = held(await registry.connect('t4', { ...lab, commands: ['device.status'] }));
    expect(second.nodeId).toBe(first.nodeId);
    expect(second.secret).not.toBe(first.secret);
    expect((await registry.list('t4'))[0].commands).toEqual(['device.status']);
  });

  it("never gives an operator's node to an agent key without its secret", async () => {
    const first = held(await registry.connect('t8', lab, 'operator'));
    await registry.drop('t8', first);
    expect(await registry.connect('t8', lab, 'agent')).toEqual({ kind: 'operator_paired' });
    expect(held(await registry.connect('t8', { ...lab, id: first.nodeId, secret: first.secret }, 'agent')).nodeId).toBe(first.nodeId);
    // An agent's own node stays an agent's: another agent connection may reuse its name once it is gone.
    const own = held(await registry.connect('t8', { ...lab, name: 'agents-own' }, 'agent'));
    await registry.drop('t8', own);
    expect(held(await registry.connect('t8', { ...lab, name: 'agents-own' }, 'agent')).nodeId).toBe(own.nodeId);
  });

  it("never lets an agent key rename its own node onto an operator's disconnected one; an operator's key may", async () => {
    const operators = held(await registry.connect('t9', { ...lab, name: 'ops' }, 'operator'));
    await registry.drop('t9', operators);
    const agents = held(await registry.connect('t9', { ...lab, name: 'agents' }, 'agent'));
    await registry.drop('t9', agents);
    const before = await registry.list('t9');

    const renamed = await registry.connect('t9', { ...lab, name: 'ops', id: agents.nodeId, secret: agents.secret }, 'agent');

    expect(renamed).toEqual({ kind: 'operator_paired' });
    expect(await registry.list('t9')).toEqual(before);
    expect((await registry.resolve('t9', 'ops'))?.id).toBe(operators.nodeId);
    // An agent's record of that name is the agent's own to rename onto; so is any record, for an operator key.
    const spare = held(await registry.connect('t9', { ...lab, name: 'spare' }, 'agent'));
    await registry.drop('t9', spare);
    expect(held(await registry.connect('t9', { ...lab, name: 'spare', id: agents.nodeId, secret: agents.secret }, 'agent')).nodeId).toBe(
      agents.nodeId,
    );
    const promoted = held(await registry.connect('t9', { ...lab, name: 'boss' }, 'operator'));
    await registry.drop('t9', promoted);
    await registry.connect('t9', { ...lab, name: 'ops', id: promoted.nodeId, secret: promoted.secret }, 'operator');
    expect((await registry.resolve('t9', 'ops'))?.id).toBe(promoted.nodeId);
    expect((await registry.list('t9')).map((n) => n.id)).not.toContain(operators.nodeId);
  });

  it(`keeps at most ${NODE_LIMITS.perTenant} nodes per tenant, also under concurrent pairings`, async () => {
    const pairings = await Promise.all(
      Array.from({ length: NODE_LIMITS.perTenant + 8 }, (_, i) => registry.connect('t5', { ...lab, name: `n${i}` })),
    );
    expect(pairings.filter((p) => !('kind' in p))).toHaveLength(NODE_LIMITS.perTenant);
    expect(pairings.filter((p) => 'kind' in p)).toEqual(Array(8).fill({ kind: 'too_many', max: NODE_LIMITS.perTenant }));
    expect(await registry.list('t5')).toHaveLength(NODE_LIMITS.perTenant);
  });

  it('resolves an exact id before a display name', async () => {
    const a = held(await registry.connect('t6', { ...lab, name: 'alpha' }));
    const b = held(await registry.connect('t6', { ...lab, name: a.nodeId }));
    expect((await registry.resolve('t6', a.nodeId))?.name).toBe('alpha');
    expect((await registry.resolve('t6', 'alpha'))?.id).toBe(a.nodeId);
    expect(b.nodeId).not.toBe(a.nodeId);
    expect(await registry.resolve('t6', 'nobody')).toBeUndefined();
  });

  it('removes a node: gone from the list, and its holder told to close', async () => {
    const hold = held(await registry.connect('t7', lab));
    const subscriber = await testRedis('node-registry-sub');
    const closes: string[] = [];
    subscriber.on('smessage', (_channel: string, message: string) => closes.push(message));
    await subscriber.ssubscribe(registry.inboxOf('t7', hold.nodeId));

    expect(await registry.remove('t7', hold.nodeId)).toBe(true);
    expect(await registry.remove('t7', hold.nodeId)).toBe(false);
    expect(await registry.list('t7')).toEqual([]);
    await waitFor(() => closes.length > 0);
    expect(closes).toEqual([closeMessages.removed]);
    await subscriber.quit();
  });
});

describe('NodeCalls', () => {
  let inbox: RunReplies;
  let holder: Redis;

  beforeAll(async () => {
    inbox = new RunReplies(createRedis(TEST_REDIS_URL, { subscriber: true }), keys, 'w1', { perSlot: false });
    await inbox.start();
    holder = await testRedis('node-calls-holder');
  });

  afterAll(async () => {
    await inbox.close();
    await holder.quit();
  });

  /** An API holding the node: answers every invocation with `answer(params)` through NodeCalls.answer. */
  async function serveNode(tenant: string, nodeId: string, answer: (params: unknown) => NodeAnswer | undefined): Promise<void> {
    holder.on('smessage', (_channel: string, message: string) => {
      const invocation = JSON.parse(message) as { invocationId: string; params: unknown };
      const reply = answer(invocation.params);
      if (reply) void calls.answer(tenant, nodeId, { invocationId: invocation.invocationId, ...reply });
    });
    await holder.ssubscribe(registry.inboxOf(tenant, nodeId));
  }

  it('carries an invocation to the holder and its answer back; a second answer finds nobody waiting', async () => {
    const hold = held(await registry.connect('c1', lab));
    const node = (await registry.resolve('c1', 'lab'))!;
    let seen: string | undefined;
    await serveNode('c1', hold.nodeId, (params) => {
      seen = JSON.stringify(params);
      return { ok: true, value: { echoed: params } };
    });

    const value = await calls.invoke(
      'c1',
      node,
      'device.status',
      { x: 1 },
      { timeoutMs: 2000, signal: new AbortController().signal, inbox },
    );

    expect(value).toEqual({ echoed: { x: 1 } });
    expect(seen).toBe('{"x":1}');
    expect(await calls.answer('c1', hold.nodeId, { invocationId: 'not-waiting', ok: true })).toBe(false);
  });

  it('rejects with the node error, with "not connected" when nobody holds it, and with a timeout', async () => {
    const hold = held(await registry.connect('c2', lab));
    const node = (await registry.resolve('c2', 'lab'))!;
    const opts = { timeoutMs: 300, signal: new AbortController().signal, inbox };

    await expect(calls.invoke('c2', node, 'device.status', {}, opts)).rejects.toThrow(new NodeCallError(nodeErrors.notConnected('lab')));

    await serveNode('c2', hold.nodeId, (params) =>
      (params as { fail?: boolean }).fail ? { ok: false, error: 'disk on fire' } : undefined,
    );
    await expect(calls.invoke('c2', node, 'device.status', { fail: true }, opts)).rejects.toThrow('disk on fire');
    await expect(calls.invoke('c2', node, 'device.status', {}, opts)).rejects.toThrow(nodeErrors.timedOut('lab', 'device.status', 300));
  });

  it("never delivers one node's answer to another node's invocation", async () => {
    const a = held(await registry.connect('c3', { ...lab, name: 'a' }));
    const b = held(await registry.connect('c3', { ...lab, name: 'b' }));
    const nodeA = (await registry.resolve('c3', 'a'))!;
    const ids: string[] = [];
    await serveNode('c3', a.nodeId, () => undefined);
    holder.on('smessage', (_c: string, m: string) => ids.push((JSON.parse(m) as { invocationId: string }).invocationId));

    const pending = calls.invoke('c3', nodeA, 'device.status', {}, { timeoutMs: 400, signal: new AbortController().signal, inbox });
    await waitFor(() => ids.length > 0);
    expect(await calls.answer('c3', b.nodeId, { invocationId: ids[0], ok: true, value: 'forged' })).toBe(false);
    await expect(pending).rejects.toThrow(NodeCallError);
  });
});

async function waitFor(check: () => boolean): Promise<void> {
  const until = Date.now() + 2000;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
