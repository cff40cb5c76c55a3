import { SessionSkillsPutSchema, TenantSkillPutSchema, type Skill } from '@codemode/contracts';
import type { z } from 'zod';
import { BODY_NOT_JSON_ERROR } from '../http/request-context';

/** A body refused: the 400's error (`<field>: <why>`) and the field it names. */
export interface SkillsBodyRefusal {
  ok: false;
  error: string;
  field: string;
}

/** A checked `PUT /v1/skills/{name}` body (the name is the path's, checked before). */
export type TenantSkillCheck = SkillsBodyRefusal | { ok: true; skill: Skill };

/**
 * A checked `PUT /v1/sessions/{sid}/skills` body. A set reaches 16 MiB, so checked on a body
 * thread (`Content` is `Uint8Array`) its contents come back as UTF-8 bytes, which Redis is handed
 * as they are (see `SkillLedger.putSession`).
 */
export type SessionSkillsCheck<Content = string> =
  SkillsBodyRefusal | { ok: true; names: string[]; descriptions: string[]; contents: Content[] };

export function checkTenantSkillPut(name: string, value: unknown): TenantSkillCheck {
  if (!isObject(value)) return { ok: false, error: BODY_NOT_JSON_ERROR, field: 'body' };
  const parsed = TenantSkillPutSchema.safeParse(value);
  if (!parsed.success) return refusal(parsed.error, 'body');
  return { ok: true, skill: { name, description: parsed.data.description, content: parsed.data.content } };
}

export function checkSessionSkillsPut(value: unknown): SessionSkillsCheck {
  if (!isObject(value)) return { ok: false, error: BODY_NOT_JSON_ERROR, field: 'body' };
  const parsed = SessionSkillsPutSchema.safeParse(value);
  if (!parsed.success) return refusal(parsed.error, 'skills');
  const skills = parsed.data.skills;
  return {
    ok: true,
    names: skills.map((skill) => skill.name),
    descriptions: skills.map((skill) => skill.description),
    contents: skills.map((skill) => skill.content),
  };
}

function refusal(error: z.ZodError, fallback: string): SkillsBodyRefusal {
  const issue = error.issues[0];
  const field = issue.path.map(String).join('.') || fallback;
  return { ok: false, error: `${field}: ${issue.message}`, field };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
