import { createHmac, randomBytes, randomInt } from 'node:crypto';
import type { SessionRef } from '@codemode/contracts';
import { LIMIT_RULES } from '@codemode/config';
import type { KeySpace } from '../platform/keys';
import { guard, type RedisClient } from '../platform/redis';
import { ScriptLoader } from '../platform/script-loader';

/** How long the deployment's run-id key lives unless an API refreshes it (each does, daily and at its first mint). */
const KEY_TTL_SECONDS = 30 * 24 * 3600;
const KEY_REFRESH_MS = 24 * 3600 * 1000;

/**
 * Where a `wait` on a run this session does not have should say the run is: in another session of
 * the tenant (`elsewhere`), nowhere it can tell (`unknown`: a run of this session's tag, one too old
 * to be held, another tenant's, or a made-up id), or `unsigned`: not an id of this scheme (an
 * earlier release's random id, looked up the earlier way).
 */
export type RunIdPlace = 'elsewhere' | 'unknown' | 'unsigned';

/**
 * Run ids that carry their session, so that a `wait` on another session's run can say so without a
 * record per run (SPEC §3's "belongs to a different session"; earlier releases wrote a `runloc` key
 * per exec). An id is `cm_` and an RFC 9562 UUIDv8 (SPEC §1's `cm_<uuid>`), its 122 free bits:
 * 48 bits of the millisecond it was minted, a 14-bit tag of (tenant, session), 28 random bits and
 * a 32-bit MAC over all of that and the tenant, keyed by the deployment's secret key in Redis. The
 * MAC makes the tag trustworthy: an id another tenant holds, or one made up, does not verify, and
 * answers as unknown. Two sessions of a tenant share a tag once in 16,384: a wait in the one on a run
 * of the other then answers unknown instead of "different session", the one inexact answer.
 */
export class RunIds {
  private key: Promise<Buffer> | undefined;
  private refreshedAt = 0;

  /** How long after its mint a run may still be held: retention after a run's end, at most the longest park before it. */
  private readonly heldForMs: number;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    scripts: ScriptLoader = new ScriptLoader(),
    private readonly now: () => number = Date.now,
  ) {
    this.heldForMs = (scripts.defined('RETENTION_MS') ?? 0) + LIMIT_RULES.snapshotTtlSeconds.max * 1000;
  }

  async mint(ref: SessionRef): Promise<string> {
    // randomInt draws from a pool the process fills 6 KiB at a time, not the generator per id.
    return mintRunId(await this.secret(), ref, this.now(), randomInt(2 ** RANDOM_BITS));
  }

  /** Where a run this session does not have is, by its id (ids older than a run may be held for: unknown, as expired). */
  async place(ref: SessionRef, runId: string): Promise<RunIdPlace> {
    return placeOfRunId(await this.secret(), ref, runId, this.now() - this.heldForMs);
  }

  /** The deployment's key: created once by whichever API asks first (SET NX), kept alive by every API. */
  private secret(): Promise<Buffer> {
    if (this.key && this.now() - this.refreshedAt < KEY_REFRESH_MS) return this.key;
    this.refreshedAt = this.now();
    const loading = this.load();
    this.key = loading;
    loading.catch(() => {
      if (this.key === loading) this.key = undefined;
    });
    return loading;
  }

  private async load(): Promise<Buffer> {
    const name = this.keys.runIdKey();
    await guard(() => this.redis.set(name, randomBytes(32).toString('hex'), 'EX', KEY_TTL_SECONDS, 'NX'));
    const [[, stored]] = (await guard(() => this.redis.multi().get(name).expire(name, KEY_TTL_SECONDS).exec())) as [
      [unknown, string | null],
    ];
    if (!stored) throw new Error('the run-id key vanished as it was created');
    return Buffer.from(stored, 'hex');
  }
}

const TAG_BITS = 14;
const RANDOM_BITS = 28;

/** The run id minted at `ms` for `ref`; `random` holds RANDOM_BITS. */
export function mintRunId(key: Buffer, ref: SessionRef, ms: number, random: number): string {
  const fields = (BigInt(ms) << BigInt(TAG_BITS + RANDOM_BITS)) | (BigInt(tagOf(key, ref)) << BigInt(RANDOM_BITS)) | BigInt(random);
  return formatId(fields, macOf(key, ref.tenant, fields));
}

/** Where a run id that this session does not have belongs (RunIds.place); minted before `oldestMs`: unknown. */
export function placeOfRunId(key: Buffer, ref: SessionRef, runId: string, oldestMs: number): RunIdPlace {
  const parsed = parseId(runId);
  if (!parsed) return 'unsigned';
  if (macOf(key, ref.tenant, parsed.fields) !== parsed.mac) return 'unknown';
  const tag = Number((parsed.fields >> BigInt(RANDOM_BITS)) & BigInt((1 << TAG_BITS) - 1));
  const ms = Number(parsed.fields >> BigInt(TAG_BITS + RANDOM_BITS));
  return tag !== tagOf(key, ref) && ms >= oldestMs ? 'elsewhere' : 'unknown';
}

/** Tags already computed, by key (a reloaded key is a new Buffer: its tags start again). */
const tags = new WeakMap<Buffer, Map<string, number>>();
/** Sessions whose tag is kept per key; past this the map starts again (a tenant making sessions only costs HMACs). */
const TAGS_KEPT = 4096;

/** The session's tag: an HMAC per exec's mint otherwise, the same for every run of the session. */
function tagOf(key: Buffer, ref: SessionRef): number {
  const name = `${ref.tenant}\0${ref.sessionId}`;
  let kept = tags.get(key);
  const known = kept?.get(name);
  if (known !== undefined) return known;
  const tag = createHmac('sha256', key).update(`tag\0${name}`).digest().readUInt16BE(0) >> (16 - TAG_BITS);
  if (!kept || kept.size >= TAGS_KEPT) tags.set(key, (kept = new Map<string, number>()));
  kept.set(name, tag);
  return tag;
}

function macOf(key: Buffer, tenant: string, fields: bigint): number {
  return createHmac('sha256', key)
    .update(`run\0${tenant}\0${fields.toString(16)}`)
    .digest()
    .readUInt32BE(0);
}

/**
 * 90 bits of fields and a 32-bit MAC (122 bits) as a UUIDv8: its top 48 bits are hex digits 0–11,
 * digit 12 is the version (8), the next 12 bits digits 13–15, and the last 62 bits follow the
 * variant bits (10) in digits 16–31.
 */
function formatId(fields: bigint, mac: number): string {
  const bits = (fields << 32n) | BigInt(mac);
  const hex =
    (bits >> 74n).toString(16).padStart(12, '0') +
    '8' +
    ((bits >> 62n) & 0xfffn).toString(16).padStart(3, '0') +
    ((2n << 62n) | (bits & LOW_62)).toString(16).padStart(16, '0');
  return `cm_${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const LOW_62 = (1n << 62n) - 1n;
const ID = /^cm_([0-9a-f]{8})-([0-9a-f]{4})-8([0-9a-f]{3})-([89ab][0-9a-f]{3})-([0-9a-f]{12})$/;

/** formatId's fields and MAC back; null for an id of another form (an earlier release's UUIDv4). */
function parseId(runId: string): { fields: bigint; mac: number } | null {
  const m = ID.exec(runId);
  if (!m) return null;
  const bits = (BigInt(`0x${m[1]}${m[2]}`) << 74n) | (BigInt(`0x${m[3]}`) << 62n) | (BigInt(`0x${m[4]}${m[5]}`) & LOW_62);
  return { fields: bits >> 32n, mac: Number(bits & 0xffffffffn) };
}
