import type { Redis } from 'ioredis';
import { MAX_SKILLS, type SessionRef } from '@codemode/contracts';
import { EventLog } from '../log/event-log';
import { KeySpace } from '../platform/keys';
import { SessionRemoval } from './session-removal';
import { SkillLedger } from './skill-ledger';
import { deleteKeys, testPrefix, testRedis } from '../test-support';

const prefix = testPrefix('skills');
const keys = new KeySpace(prefix);
let redis: Redis;
let skills: SkillLedger;
let log: EventLog;
let removal: SessionRemoval;
let n = 0;
const newTenant = (): string => `tenant-${++n}`;
const newRef = (tenant = newTenant()): SessionRef => ({ tenant, sessionId: `s-${++n}` });
const skill = (name: string, description = `about ${name}`, content = `# ${name}`) => ({ name, description, content });

beforeAll(async () => {
  redis = await testRedis('skills');
  skills = new SkillLedger(redis, keys);
  log = new EventLog(redis, keys);
  removal = new SessionRemoval(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

async function storedBytes(ref: SessionRef): Promise<number> {
  return Number((await redis.hget(keys.session(ref), 'storedBytes')) ?? 0);
}

test("the session's skills shadow the tenant's; read answers the session's first, then the tenant's, then null", async () => {
  const ref = newRef();
  await skills.putTenant(ref.tenant, skill('deploy'));
  await skills.putTenant(ref.tenant, skill('review', 'tenant review', 'tenant text'));
  await skills.putSession(ref, {
    names: ['review', 'notes'],
    descriptions: ['own review', 'n'],
    contents: ['own text', Buffer.from('é bytes')],
  });
  expect(await skills.list(ref)).toEqual([
    { name: 'deploy', description: 'about deploy' },
    { name: 'notes', description: 'n' },
    { name: 'review', description: 'own review' },
  ]);
  expect(await skills.read(ref, 'review')).toEqual({ name: 'review', description: 'own review', content: 'own text' });
  expect(await skills.read(ref, 'notes')).toEqual({ name: 'notes', description: 'n', content: 'é bytes' });
  expect(await skills.read(ref, 'deploy')).toEqual(skill('deploy'));
  expect(await skills.read(ref, 'missing')).toBeNull();
  // Another tenant's session, even of the same id, sees none of them.
  const other = { tenant: newTenant(), sessionId: ref.sessionId };
  expect(await skills.list(other)).toEqual([]);
  expect(await skills.read(other, 'deploy')).toBeNull();
});

test('a skill named __proto__ is listed and read like any other', async () => {
  const ref = newRef();
  await skills.putTenant(ref.tenant, skill('__proto__'));
  expect(await skills.listTenant(ref.tenant)).toEqual([{ name: '__proto__', description: 'about __proto__' }]);
  expect(await skills.read(ref, '__proto__')).toEqual(skill('__proto__'));
});

test('a session put replaces the set, logs names and count only, and counts its bytes in storedBytes', async () => {
  const ref = newRef();
  const { eventId } = await skills.putSession(ref, { names: ['a', 'b'], descriptions: ['da', 'db'], contents: ['secret-a', 'bb'] });
  const first = await storedBytes(ref);
  // UTF-8 of names, descriptions and contents: 'a'+'da'+'secret-a' + 'b'+'db'+'bb'.
  expect(Number(await redis.hget(keys.session(ref), 'skillsBytes'))).toBe(16);
  const { events } = await log.read(ref, { limit: 100 });
  expect(events).toEqual([expect.objectContaining({ id: eventId, type: 'skills.registered', data: { skills: ['a', 'b'], count: 2 } })]);
  expect(JSON.stringify(await redis.xrange(keys.events(ref), '-', '+'))).not.toContain('secret-a');

  await skills.putSession(ref, { names: ['c'], descriptions: ['dc'], contents: ['c'.repeat(1000)] });
  expect((await skills.list(ref)).map((s) => s.name)).toEqual(['c']);
  const second = await storedBytes(ref);
  expect(Number(await redis.hget(keys.session(ref), 'skillsBytes'))).toBe(1003);
  // The new set's bytes replace the old set's (the event's own entry counts on top).
  expect(second - first).toBeGreaterThanOrEqual(1003 - 16);

  await skills.putSession(ref, { names: [], descriptions: [], contents: [] });
  expect(await skills.list(ref)).toEqual([]);
  expect(await redis.exists(keys.sessionSkills(ref), keys.sessionSkillDocs(ref))).toBe(0);
  expect(await redis.hget(keys.session(ref), 'skillsBytes')).toBeNull();
  expect(await storedBytes(ref)).toBeLessThan(second - 500);
  // Both staged hashes were renamed away: nothing is left behind.
  expect(await redis.keys(`${keys.sessionBase(ref).replace(/[{}]/g, '\\$&')}:*staged*`)).toEqual([]);
});

test("the session's skill keys expire with the session and go with its deletion", async () => {
  const ref = newRef();
  await skills.putSession(ref, { names: ['a'], descriptions: ['d'], contents: ['c'] });
  const sessionTtl = await redis.pttl(keys.session(ref));
  expect(await redis.pttl(keys.sessionSkills(ref))).toBeGreaterThan(sessionTtl - 5000);
  expect(await redis.pttl(keys.sessionSkillDocs(ref))).toBeGreaterThan(sessionTtl - 5000);
  expect(await removal.remove(ref)).toBe(true);
  expect(await redis.exists(keys.sessionSkills(ref), keys.sessionSkillDocs(ref))).toBe(0);
  expect(await skills.list(ref)).toEqual([]);
});

test(`a tenant holds at most ${MAX_SKILLS} skills, also when new names are put concurrently; replacing one is allowed`, async () => {
  const tenant = newTenant();
  await Promise.all(Array.from({ length: MAX_SKILLS - 10 }, (_, i) => skills.putTenant(tenant, skill(`fill-${i}`))));
  const raced = await Promise.all(Array.from({ length: 40 }, (_, i) => skills.putTenant(tenant, skill(`race-${i}`))));
  expect(raced.filter((put) => put.stored)).toHaveLength(10);
  expect(raced.filter((put) => !put.stored).every((put) => put.count === MAX_SKILLS)).toBe(true);
  expect(await redis.hlen(keys.tenantSkills(tenant))).toBe(MAX_SKILLS);
  expect(await redis.hlen(keys.tenantSkillDocs(tenant))).toBe(MAX_SKILLS);
  expect(await skills.putTenant(tenant, skill('fill-0', 'new'))).toEqual({ stored: true, count: MAX_SKILLS });
  expect(await skills.deleteTenant(tenant, 'fill-0')).toBe(true);
  expect(await skills.deleteTenant(tenant, 'fill-0')).toBe(false);
  expect(await skills.putTenant(tenant, skill('one-more'))).toEqual({ stored: true, count: MAX_SKILLS });
});
