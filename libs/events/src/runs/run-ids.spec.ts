import { createHmac, randomBytes } from 'node:crypto';
import { RUN_ID_PATTERN } from '@codemode/contracts';
import { mintRunId, placeOfRunId } from './run-ids';

const key = randomBytes(32);
const MS = Date.parse('2026-12-05T06:00:00.000Z');
const here = { tenant: 'acme', sessionId: 'here' };
const there = { tenant: 'acme', sessionId: 'there' };
/** A UUID of any version (RFC 9562): what clients validating `cm_<uuid>` accept. */
const UUID = /^cm_[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('run ids that carry their session (RunIds)', () => {
  it('are cm_<uuid>: a UUIDv8 the contract’s pattern accepts, different at each mint', () => {
    const ids = Array.from({ length: 50 }, (_, i) => mintRunId(key, here, MS + i, (i * 2654435761) % 2 ** 28));
    for (const id of ids) {
      expect(id).toMatch(RUN_ID_PATTERN);
      expect(id).toMatch(UUID);
      expect(id[17]).toBe('8');
    }
    expect(new Set(ids).size).toBe(50);
  });

  it('place a run of another session of the tenant elsewhere, and one of this session nowhere', () => {
    const id = mintRunId(key, there, MS, 12345);
    expect(placeOfRunId(key, here, id, MS - 1)).toBe('elsewhere');
    // Asked from its own session (it was not found there): nothing to tell.
    expect(placeOfRunId(key, there, id, MS - 1)).toBe('unknown');
  });

  it('do not tell another tenant anything, nor accept an id changed in any digit', () => {
    const id = mintRunId(key, there, MS, 12345);
    expect(placeOfRunId(key, { tenant: 'other', sessionId: 'here' }, id, MS - 1)).toBe('unknown');
    expect(placeOfRunId(randomBytes(32), here, id, MS - 1)).toBe('unknown');
    for (let i = 0; i < id.length; i++) {
      if (!/[0-9a-f]/.test(id[i]) || i < 3) continue;
      const changed = id.slice(0, i) + (id[i] === '0' ? '1' : '0') + id.slice(i + 1);
      expect([i, placeOfRunId(key, here, changed, MS - 1)]).not.toEqual([i, 'elsewhere']);
    }
  });

  it('answer unknown for an id older than a run may be held (expired), and unsigned for an earlier release’s random id', () => {
    const id = mintRunId(key, there, MS, 1);
    expect(placeOfRunId(key, here, id, MS + 1)).toBe('unknown');
    expect(placeOfRunId(key, here, 'cm_6f9619ff-8b86-4011-b42d-00cf4fc964ff', 0)).toBe('unsigned');
    expect(placeOfRunId(key, here, 'not-an-id', 0)).toBe('unsigned');
  });

  it('share a tag between two sessions of a tenant rarely (14 bits): about 1 in 16,384', () => {
    let shared = 0;
    for (let s = 0; s < 2000; s++) {
      const probe = mintRunId(key, { tenant: 'acme', sessionId: `s${s}` }, MS, 0);
      if (placeOfRunId(key, here, probe, 0) === 'unknown') shared += 1;
    }
    // 2,000 sessions against `here`: ~0.12 expected to share its tag.
    expect(shared).toBeLessThanOrEqual(2);
  });

  it('carry the tag an HMAC of their session gives under their key, past as many sessions as are kept', () => {
    // The tag's 14 bits: the 12 after the version digit, then the 2 after the variant bits.
    const tagIn = (id: string): number => {
      const hex = id.slice(3).replace(/-/g, '');
      return (parseInt(hex.slice(13, 16), 16) << 2) | (parseInt(hex[16], 16) & 3);
    };
    const hmacTag = (k: Buffer, tenant: string, sessionId: string): number =>
      createHmac('sha256', k).update(`tag\0${tenant}\0${sessionId}`).digest().readUInt16BE(0) >> 2;
    let wrong = 0;
    for (let s = 0; s < 5000; s++) {
      if (tagIn(mintRunId(key, { tenant: 'acme', sessionId: `kept-${s}` }, MS, s)) !== hmacTag(key, 'acme', `kept-${s}`)) wrong += 1;
    }
    expect(wrong).toBe(0);
    // A session whose tag is kept under `key` gets another key's own tag there.
    mintRunId(key, here, MS, 1);
    const other = randomBytes(32);
    expect(tagIn(mintRunId(other, here, MS, 7))).toBe(hmacTag(other, 'acme', 'here'));
  });
});
