import { Injectable } from '@nestjs/common';
import { isSkillName, MAX_SKILLS, SKILL_NAME_RULE, type SessionRef, type Skill, type SkillSummary } from '@codemode/contracts';
import { SkillLedger } from '@codemode/events';
import { BodyThreads } from '../bodies/body-threads';
import { InvalidInputException, NotFoundApiException } from '../http/api-errors';
import { requireObjectBody } from '../http/request-params';
import type { ParsedBody } from '../http/request-context';
import {
  checkSessionSkillsPut,
  checkTenantSkillPut,
  type SessionSkillsCheck,
  type SkillsBodyRefusal,
  type TenantSkillCheck,
} from './skills-body';

/** What the tenant's count cap answers when a new skill would pass it. */
export const TENANT_SKILLS_FULL = `the tenant has ${MAX_SKILLS} skills, the most it may register; delete one first.`;

/**
 * Skills (SPEC §15): the tenant's (`PUT`/`GET`/`DELETE /v1/skills`) and a session's
 * (`PUT /v1/sessions/{sid}/skills`). A body past 8 KiB is parsed and checked on a body thread
 * (a session's set reaches 16 MiB), so the event loop never walks it.
 */
@Injectable()
export class SkillsService {
  constructor(
    private readonly skills: SkillLedger,
    private readonly bodies: BodyThreads,
  ) {}

  async putTenant(tenant: string, name: string, body: ParsedBody): Promise<Skill> {
    requireSkillName(name);
    const check = await this.checkTenant(tenant, name, body);
    if (!check.ok) throw refused(check);
    const put = await this.skills.putTenant(tenant, check.skill);
    if (!put.stored) throw new InvalidInputException(`name: ${TENANT_SKILLS_FULL}`, { field: 'name', limit: MAX_SKILLS });
    return check.skill;
  }

  async listTenant(tenant: string): Promise<{ skills: SkillSummary[] }> {
    return { skills: await this.skills.listTenant(tenant) };
  }

  async deleteTenant(tenant: string, name: string): Promise<{ name: string; deleted: true }> {
    requireSkillName(name);
    if (!(await this.skills.deleteTenant(tenant, name))) throw new NotFoundApiException(`skill ${name} not found.`);
    return { name, deleted: true };
  }

  /** Replaces the session's set (creating the session if missing); answers the names and descriptions stored. */
  async putSession(ref: SessionRef, body: ParsedBody): Promise<{ skills: SkillSummary[] }> {
    const check = await this.checkSession(ref.tenant, body);
    if (!check.ok) throw refused(check);
    const contents = check.contents.map((content) => (typeof content === 'string' ? content : asBuffer(content)));
    await this.skills.putSession(ref, { names: check.names, descriptions: check.descriptions, contents });
    return { skills: check.names.map((name, i) => ({ name, description: check.descriptions[i] })) };
  }

  private async checkTenant(tenant: string, name: string, body: ParsedBody): Promise<TenantSkillCheck> {
    if (body.kind !== 'large') return checkTenantSkillPut(name, requireObjectBody(body));
    const read = await this.bodies
      .run(tenant, { kind: 'tenant-skill', bytes: body.bytes, name })
      .catch(() => ({ kind: 'invalid_json' }) as const);
    // Unreadable: requireObjectBody answers it as it answers a small body that is.
    return read.kind === 'checked' ? read.check : checkTenantSkillPut(name, requireObjectBody(read));
  }

  private async checkSession(tenant: string, body: ParsedBody): Promise<SessionSkillsCheck<string | Uint8Array>> {
    if (body.kind !== 'large') return checkSessionSkillsPut(requireObjectBody(body));
    const read = await this.bodies
      .run(tenant, { kind: 'session-skills', bytes: body.bytes })
      .catch(() => ({ kind: 'invalid_json' }) as const);
    return read.kind === 'checked' ? read.check : checkSessionSkillsPut(requireObjectBody(read));
  }
}

function requireSkillName(name: string): void {
  if (!isSkillName(name)) throw new InvalidInputException(`name: ${SKILL_NAME_RULE}.`, { field: 'name' });
}

function refused(check: SkillsBodyRefusal): InvalidInputException {
  return check.field === 'body' ? new InvalidInputException(check.error) : new InvalidInputException(check.error, { field: check.field });
}

/** A body thread's bytes as the Buffer ioredis writes without encoding (no copy). */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
