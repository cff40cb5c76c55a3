import { z } from 'zod';
import { SessionSkillsPutSchema, SkillSchema, TenantSkillPutSchema } from '@codemode/contracts';

/*
 * Skills (SPEC §15): the bodies and answers of the skills controllers, for the OpenAPI document.
 */

const SkillSummarySchema = z.object({ name: z.string(), description: z.string() });
/** `GET /v1/skills` and `PUT /v1/sessions/{sid}/skills`: names and descriptions, never contents. */
export const SkillListSchema = z.object({ skills: z.array(SkillSummarySchema) });
/** `DELETE /v1/skills/{name}`. */
export const SkillDeletedSchema = z.object({ name: z.string(), deleted: z.literal(true) });

export const SKILLS_REQUEST_SCHEMAS = {
  TenantSkillPut: TenantSkillPutSchema,
  SessionSkillsPut: SessionSkillsPutSchema,
} satisfies Record<string, z.ZodType>;

export const SKILLS_RESPONSE_SCHEMAS = {
  Skill: SkillSchema,
  SkillList: SkillListSchema,
  SkillDeleted: SkillDeletedSchema,
} satisfies Record<string, z.ZodType>;
