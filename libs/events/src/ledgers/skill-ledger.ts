import { randomBytes } from 'node:crypto';
import { MAX_SKILLS, type SessionRef, type Skill, type SkillSummary } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import type { KeySpace } from '../platform/keys';
import { checkReply, LUA_CODES } from '../platform/lua-errors';
import { execMulti, guard } from '../platform/redis';
import { ScriptLoader } from '../platform/script-loader';
import { SessionIndex } from '../log/session-index';

/** A staged set that its registration never renamed into place (the API died between) goes by then. */
const STAGED_TTL_MS = 60_000;

/** A session's skill set as the API hands it over: names and descriptions, and each content as UTF-8 bytes (never re-encoded here). */
export interface SkillSet {
  names: readonly string[];
  descriptions: readonly string[];
  contents: readonly (string | Buffer)[];
}

/** A tenant skill stored, or refused at the tenant's count cap (`stored: false`); `count`: the tenant's skills now. */
export interface TenantSkillPut {
  stored: boolean;
  count: number;
}

/**
 * Skills (SPEC §15): the tenant's (`PUT /v1/skills/{name}`, in the tenant's slot, never
 * expiring: an operator wrote them) and each session's (`PUT /v1/sessions/{sid}/skills`, a
 * projection of `skills.registered` beside the session's other keys, so the session's expiry,
 * deletion and stored bytes cover it). Each scope is two hashes, name → description and
 * name → content, so `skills.list()` never reads a content.
 */
export class SkillLedger {
  private readonly index: SessionIndex;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly scripts = ScriptLoader.default(),
  ) {
    this.index = new SessionIndex(redis, keys, scripts);
  }

  /** Stores one tenant skill (the name already checked); a new name past MAX_SKILLS is refused, atomically. */
  async putTenant(tenant: string, skill: Skill): Promise<TenantSkillPut> {
    const keys = [this.keys.tenantSkills(tenant), this.keys.tenantSkillDocs(tenant)];
    const raw = await guard(() =>
      this.scripts.run(this.redis, 'put-tenant-skill', keys, [skill.name, skill.description, skill.content, String(MAX_SKILLS)]),
    );
    const [code, count] = raw as [number, number];
    return { stored: code === LUA_CODES.ok, count: Number(count) };
  }

  /** Removes one tenant skill; answers whether it existed. */
  async deleteTenant(tenant: string, name: string): Promise<boolean> {
    const multi = this.redis.multi().hdel(this.keys.tenantSkills(tenant), name).hdel(this.keys.tenantSkillDocs(tenant), name);
    const [removed] = (await execMulti(multi)) as [number, number];
    return removed === 1;
  }

  /** The tenant's skills' names and descriptions, sorted by name. */
  async listTenant(tenant: string): Promise<SkillSummary[]> {
    return shadowed([], await this.entries(this.keys.tenantSkills(tenant)));
  }

  /**
   * One hash's fields and values, as pairs: HKEYS and HVALS in one MULTI (the same order), never
   * HGETALL's object, in which a skill named `__proto__` would be lost.
   */
  private async entries(key: string): Promise<[string, string][]> {
    const [names, values] = (await execMulti(this.redis.multi().hkeys(key).hvals(key))) as [string[], string[]];
    return names.map((name, i) => [name, values[i]]);
  }

  /**
   * Replaces the session's skills with `set` (already checked), creating the session if missing,
   * and appends `skills.registered` `{skills: names, count}`. The set is HSET into staged hashes
   * and the script renames them into place, in one pipeline: it never passes through Lua.
   */
  async putSession(ref: SessionRef, set: SkillSet): Promise<{ eventId: string }> {
    const version = randomBytes(12).toString('hex');
    const [stagedDescriptions, stagedDocs] = this.keys.stagedSessionSkills(ref, version);
    const keys = [
      ...this.keys.scriptKeys(ref, ''),
      this.keys.sessionSkills(ref),
      this.keys.sessionSkillDocs(ref),
      stagedDescriptions,
      stagedDocs,
    ];
    const data = JSON.stringify({ skills: set.names, count: set.names.length });
    const args = [data, String(set.names.length), String(storedBytes(set))];
    const raw = await this.index.alongside(ref, () =>
      guard(async () => {
        // Sent in this order on one connection: the script runs right after the staged writes.
        const staged: Promise<unknown>[] = [];
        if (set.names.length > 0) {
          staged.push(this.redis.hset(stagedDescriptions, ...set.names.flatMap((name, i) => [name, set.descriptions[i]])));
          staged.push(this.redis.pexpire(stagedDescriptions, STAGED_TTL_MS));
          staged.push(this.redis.hset(stagedDocs, ...set.names.flatMap((name, i) => [name, set.contents[i]])));
          staged.push(this.redis.pexpire(stagedDocs, STAGED_TTL_MS));
        }
        const [registered] = await Promise.all([this.scripts.run(this.redis, 'register-skills', keys, args), ...staged]);
        return registered;
      }),
    );
    const reply = checkReply(raw, { type: 'skills.registered' });
    return { eventId: String(reply[1]) };
  }

  /**
   * `skills.list()` (SPEC §15): the session's and the tenant's names and descriptions, the
   * session's shadowing the tenant's of the same name, sorted by name. At most 2 × MAX_SKILLS
   * descriptions of MAX_SKILL_DESCRIPTION_CHARS each: no content is read.
   */
  async list(ref: SessionRef): Promise<SkillSummary[]> {
    const [session, tenant] = await Promise.all([
      this.entries(this.keys.sessionSkills(ref)),
      this.entries(this.keys.tenantSkills(ref.tenant)),
    ]);
    return shadowed(session, tenant);
  }

  /** `skills.read(name)`: the session's skill of that name, else the tenant's, else null. One of each scope's pairs is read together (MULTI). */
  async read(ref: SessionRef, name: string): Promise<Skill | null> {
    const session = this.redis.multi().hget(this.keys.sessionSkills(ref), name).hget(this.keys.sessionSkillDocs(ref), name);
    const tenant = this.redis.multi().hget(this.keys.tenantSkills(ref.tenant), name).hget(this.keys.tenantSkillDocs(ref.tenant), name);
    const [own, shared] = (await Promise.all([execMulti(session), execMulti(tenant)])) as [
      [string | null, string | null],
      [string | null, string | null],
    ];
    for (const [description, content] of [own, shared]) {
      if (description !== null && content !== null) return { name, description, content };
    }
    return null;
  }
}

/** SPEC §15: the session's skills (name, description) shadow the tenant's of the same name; sorted by name. */
export function shadowed(session: readonly [string, string][], tenant: readonly [string, string][]): SkillSummary[] {
  const merged = new Map<string, string>(tenant);
  for (const [name, description] of session) merged.set(name, description);
  return [...merged].map(([name, description]) => ({ name, description })).sort(byName);
}

function byName(left: SkillSummary, right: SkillSummary): number {
  return left.name < right.name ? -1 : left.name > right.name ? 1 : 0;
}

/** What a session's set counts in its stored bytes: UTF-8 of names, descriptions and contents. */
function storedBytes(set: SkillSet): number {
  let bytes = 0;
  set.names.forEach((name, i) => {
    const content = set.contents[i];
    bytes +=
      Buffer.byteLength(name) +
      Buffer.byteLength(set.descriptions[i]) +
      (typeof content === 'string' ? Buffer.byteLength(content) : content.byteLength);
  });
  return bytes;
}
