import type { Redis } from 'ioredis';
import { KeySpace, TenantToolsLedger } from '@codemode/events';
import { HeaderVault } from '@codemode/tools';
import { deleteKeys, testRedis } from '../../../../test/utils/redis-test-keys';
import { rotateTenantToolHeaders } from './header-rotation';

const prefix = `t-rotate-${process.pid}`;
const OLD = 'o'.repeat(40);
const NEW = 'n'.repeat(40);
const CANARY = 'canary-rotate-5d1e';
let redis: Redis;
let ledger: TenantToolsLedger;

beforeAll(async () => {
  redis = await testRedis('rotate');
  ledger = new TenantToolsLedger(redis, new KeySpace(prefix));
});
afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

const store = async (vault: HeaderVault, tenant: string, name: string, endpoint = `https://${name}.example/`) => {
  const sealedHeaders = vault.seal({ Authorization: `Bearer ${CANARY}` }, { tenant, tool: name, endpoint });
  await ledger.put(
    tenant,
    name,
    JSON.stringify({ name, description: 'd', inputSchema: { type: 'object' }, endpoint, headerNames: ['Authorization'], sealedHeaders }),
  );
};

describe('rotateTenantToolHeaders (SPEC §18 secrets:rotate)', () => {
  it('re-encrypts every stored value under the current key, so the previous key can go', async () => {
    const old = new HeaderVault(OLD);
    await store(old, 'acme', 'lookup');
    await store(old, 'beta', 'ship');
    await ledger.put('beta', 'plain', JSON.stringify({ name: 'plain', description: 'd', inputSchema: { type: 'object' } }));
    await store(new HeaderVault('x'.repeat(40)), 'beta', 'lost');

    const rotated = new HeaderVault(NEW, OLD);
    const report = await rotateTenantToolHeaders(ledger, rotated);
    expect(report).toEqual({ resealed: 2, current: 0, raced: 0, unreadable: ['beta/lost'] });
    const onlyNew = new HeaderVault(NEW);
    for (const [tenant, name] of [
      ['acme', 'lookup'],
      ['beta', 'ship'],
    ]) {
      const tool = JSON.parse((await ledger.get(tenant, name)) ?? '{}') as { sealedHeaders: string; endpoint: string };
      expect(onlyNew.open(tool.sealedHeaders, { tenant, tool: name, endpoint: tool.endpoint })).toEqual({
        Authorization: `Bearer ${CANARY}`,
      });
    }
    expect(await rotateTenantToolHeaders(ledger, rotated)).toEqual({ resealed: 0, current: 2, raced: 0, unreadable: ['beta/lost'] });
    // Nothing in Redis holds the value in clear.
    for (const key of await redis.keys(`${prefix}:*`)) {
      const type = await redis.type(key);
      const values = type === 'hash' ? Object.values(await redis.hgetall(key)) : type === 'string' ? [await redis.get(key)] : [];
      expect(values.join('\n')).not.toContain(CANARY);
    }
  });
});
