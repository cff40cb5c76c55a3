import { z } from 'zod';

/** Skills (SPEC §15): Markdown documents with a description, the tenant's and a session's. */

/** Largest skill: UTF-8 bytes of its description and content together. */
export const MAX_SKILL_BYTES = 256 * 1024;
/** Most skills a tenant registers, and a session's set holds. */
export const MAX_SKILLS = 256;
/** Longest description: `skills.list()` answers every one of them. */
export const MAX_SKILL_DESCRIPTION_CHARS = 1024;
/** A skill name: 1–64 of `[A-Za-z0-9._-]`, not `.` or `..` (it is a REST path segment). */
export const SKILL_NAME_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
export const SKILL_NAME_RULE = 'skill name must be 1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-", and not "." or ".."';
export const SKILL_TOO_LARGE = `skill exceeds ${MAX_SKILL_BYTES / 1024} KiB (UTF-8 bytes of description and content)`;
export const TOO_MANY_SKILLS = `at most ${MAX_SKILLS} skills`;

export function isSkillName(name: unknown): name is string {
  return typeof name === 'string' && SKILL_NAME_PATTERN.test(name) && name !== '.' && name !== '..';
}

/** UTF-8 bytes of a string, without encoding it (the console bundles this module too: no Buffer). */
function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && isLow(text.charCodeAt(i + 1))) {
      bytes += 4;
      i += 1;
    }
    // Any other unit, a lone surrogate included (written as U+FFFD), is 3 bytes.
    else bytes += 3;
  }
  return bytes;
}

function isLow(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** UTF-8 bytes a skill counts against MAX_SKILL_BYTES. */
export function skillBytes(skill: { description: string; content: string }): number {
  return utf8Bytes(skill.description) + utf8Bytes(skill.content);
}

export const SkillNameSchema = z.string().refine(isSkillName, { message: SKILL_NAME_RULE });

const SkillBodyShape = {
  description: z.string().max(MAX_SKILL_DESCRIPTION_CHARS),
  content: z.string(),
};

/** `PUT /v1/skills/{name}` (operator role). */
export const TenantSkillPutSchema = z
  .object(SkillBodyShape)
  .refine((skill) => skillBytes(skill) <= MAX_SKILL_BYTES, { message: SKILL_TOO_LARGE, path: ['content'] });
export type TenantSkillPut = z.infer<typeof TenantSkillPutSchema>;

export const SkillSchema = z
  .object({ name: SkillNameSchema, ...SkillBodyShape })
  .refine((skill) => skillBytes(skill) <= MAX_SKILL_BYTES, { message: SKILL_TOO_LARGE, path: ['content'] });
export type Skill = z.infer<typeof SkillSchema>;

/** `PUT /v1/sessions/{sid}/skills`: replaces the session's set; names are unique. */
export const SessionSkillsPutSchema = z.object({
  skills: z
    .array(SkillSchema)
    .max(MAX_SKILLS, { message: TOO_MANY_SKILLS })
    .superRefine((skills, ctx) => {
      const seen = new Set<string>();
      skills.forEach((skill, index) => {
        if (seen.has(skill.name)) ctx.addIssue({ code: 'custom', message: `duplicate skill name ${skill.name}`, path: [index, 'name'] });
        seen.add(skill.name);
      });
    }),
});
export type SessionSkillsPut = z.infer<typeof SessionSkillsPutSchema>;

/** What `skills.list()` and `GET /v1/skills` answer per skill. */
export interface SkillSummary {
  name: string;
  description: string;
}
