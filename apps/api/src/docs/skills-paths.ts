import { body, errors, ok, param, type PathItem } from './openapi-builders';

const NAME = {
  name: 'name',
  in: 'path',
  required: true,
  description: 'Skill name: 1-64 of `A-Za-z0-9._-`, not `.` or `..`.',
  schema: { type: 'string' },
};
const LIMITS = 'At most 256 KiB each (UTF-8 bytes of description and content), descriptions at most 1024 characters.';

/** The routes of SPEC §15's skills (TenantSkillsController, SessionSkillsController). */
export function skillsPaths(): Record<string, PathItem> {
  return {
    '/v1/skills': {
      get: {
        operationId: 'listSkills',
        tags: ['skills'],
        summary: "List the tenant's skills",
        description: 'Names and descriptions, sorted by name; any key of the tenant.',
        responses: { '200': ok("The tenant's skills.", 'SkillList'), ...errors(401, 503) },
      },
    },
    '/v1/skills/{name}': {
      put: {
        operationId: 'putSkill',
        tags: ['skills'],
        summary: 'Store one of the tenant’s skills',
        description: `Creates or replaces the skill \`name\`; a new name is refused (400) once the tenant has 256. ${LIMITS} Operator keys only.`,
        parameters: [NAME],
        requestBody: body('TenantSkillPut'),
        responses: { '200': ok('The stored skill.', 'Skill'), ...errors(400, 401, 403, 413, 503) },
      },
      delete: {
        operationId: 'deleteSkill',
        tags: ['skills'],
        summary: 'Remove one of the tenant’s skills',
        description: 'Operator keys only; 404 when the tenant has no skill of that name.',
        parameters: [NAME],
        responses: { '200': ok('Removed.', 'SkillDeleted'), ...errors(400, 401, 403, 404, 503) },
      },
    },
    '/v1/sessions/{sid}/skills': {
      parameters: [param('SessionId')],
      put: {
        operationId: 'putSessionSkills',
        tags: ['skills'],
        summary: "Replace the session's skills",
        description:
          `At most 256 skills with unique names, in a body of at most 16 MiB. ${LIMITS} ` +
          "A session's skill shadows the tenant's of the same name in `skills.list()` and `skills.read(name)`. Creates the session if missing.",
        requestBody: body('SessionSkillsPut'),
        responses: { '200': ok('The names and descriptions stored.', 'SkillList'), ...errors(400, 401, 413, 503) },
      },
    },
  };
}
