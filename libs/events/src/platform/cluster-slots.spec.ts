import { CLUSTER_SLOTS, keySlot, slotTag } from './cluster-slots';

describe('keySlot', () => {
  it('hashes as Redis Cluster does (CLUSTER KEYSLOT)', () => {
    expect(keySlot('somekey')).toBe(11058);
    expect(keySlot('foo{hash_tag}')).toBe(2515);
    expect(keySlot('cm:{acme:s1}:events')).toBe(16046);
  });

  it('hashes the first non-empty tag only, and the whole key without one', () => {
    expect(keySlot('a{acme:s1}b{x}')).toBe(keySlot('acme:s1'));
    expect(keySlot('{}x')).toBe(10595);
    expect(keySlot('{}x')).toBe(keySlot('{}x'));
  });
});

describe('slotTag', () => {
  it('gives every slot a tag that hashes to it', () => {
    for (const slot of [0, 1, 5460, 16046, CLUSTER_SLOTS - 1]) expect(keySlot(`x:{${slotTag(slot)}}`)).toBe(slot);
    expect(new Set(Array.from({ length: CLUSTER_SLOTS }, (_, s) => slotTag(s))).size).toBe(CLUSTER_SLOTS);
  });
});
