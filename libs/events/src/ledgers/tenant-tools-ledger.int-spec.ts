import type { Redis } from 'ioredis';
import { MAX_TENANT_TOOLS } from '@codemode/contracts';
import { KeySpace } from '../platform/keys';
import { StoredBytesLedger } from './stored-bytes-ledger';
import { TenantToolsLedger } from './tenant-tools-ledger';
import { deleteKeys, testPrefix, testRedis } from '../test-support';

const prefix = testPrefix('tenant-tools');
const keys = new KeySpace(prefix);
let redis: Redis;
let tools: TenantToolsLedger;
let n = 0;
const newTenant = (): string => `tenant-${++n}`;
const json = (name: string, description = `about ${name}`): string =>
  JSON.stringify({ name, description, inputSchema: { type: 'object' } });

beforeAll(async () => {
  redis = await testRedis('tenant-tools');
  tools = new TenantToolsLedger(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

describe('TenantToolsLedger (SPEC §18)', () => {
  it('stores, reads and removes a tool, bumping the version at every change', async () => {
    const tenant = newTenant();
    expect(await tools.version(tenant)).toBe('');
    expect(await tools.put(tenant, 'lookup', json('lookup'))).toEqual({ stored: true, count: 1 });
    const first = await tools.version(tenant);
    expect(await tools.put(tenant, 'lookup', json('lookup', 'changed'))).toEqual({ stored: true, count: 1 });
    const second = await tools.version(tenant);
    expect(second).not.toBe(first);
    const read = await tools.read(tenant);
    expect(read.version).toBe(second);
    expect(read.tools.map(([name, value]) => [name, JSON.parse(value.toString('utf8')).description])).toEqual([['lookup', 'changed']]);
    expect(await tools.delete(tenant, 'lookup')).toBe(true);
    expect(await tools.delete(tenant, 'lookup')).toBe(false);
    expect(await tools.version(tenant)).not.toBe(second);
    expect((await tools.read(tenant)).tools).toEqual([]);
  });

  it('keeps a tool named __proto__ as any other', async () => {
    const tenant = newTenant();
    await tools.put(tenant, '__proto__', json('__proto__'));
    expect((await tools.read(tenant)).tools.map(([name]) => name)).toEqual(['__proto__']);
  });

  it('refuses a new name past MAX_TENANT_TOOLS, even raced, and still replaces an existing one', async () => {
    const tenant = newTenant();
    const puts = await Promise.all(Array.from({ length: MAX_TENANT_TOOLS + 20 }, (_, i) => tools.put(tenant, `t${i}`, json(`t${i}`))));
    expect(puts.filter((put) => put.stored)).toHaveLength(MAX_TENANT_TOOLS);
    expect((await tools.read(tenant)).tools).toHaveLength(MAX_TENANT_TOOLS);
    const stored = puts.findIndex((put) => put.stored);
    expect(await tools.put(tenant, `t${stored}`, json(`t${stored}`, 'replaced'))).toEqual({ stored: true, count: MAX_TENANT_TOOLS });
    expect((await tools.put(tenant, 'one-more', json('one-more'))).stored).toBe(false);
  });

  it("counts its tools' bytes in the tenant's stored bytes, and gives them back on delete", async () => {
    const tenant = newTenant();
    const storedBytes = new StoredBytesLedger(redis, keys);
    const before = (await storedBytes.total(tenant)).bytes;
    const value = json('big', 'x'.repeat(5000));
    await tools.put(tenant, 'big', value);
    expect(await tools.bytes(tenant)).toBe('big'.length + value.length);
    expect((await storedBytes.total(tenant)).bytes).toBe(before + 'big'.length + value.length);
    await tools.delete(tenant, 'big');
    expect((await storedBytes.total(tenant)).bytes).toBe(before);
  });
});
