import type { SessionSkillsPut, Skill, TenantSkillPut } from '@codemode/contracts';
import type { Example } from './example';
import type { SKILLS_REQUEST_SCHEMAS, SKILLS_RESPONSE_SCHEMAS } from './skills-schemas';

const deploy: TenantSkillPut = {
  description: 'How this team deploys a service',
  content: '# Deploy\n\n1. Tag the release.\n2. Run the pipeline.',
};
const skill: Skill = { name: 'deploy', ...deploy };
const sessionSet: SessionSkillsPut = {
  skills: [{ name: 'review', description: 'Review checklist for this task', content: '# Review\n\n- Tests pass.\n- Docs updated.' }],
};

/** Examples of the SPEC §15 skills bodies and answers (checked against their schemas like the others). */
export const SKILLS_EXAMPLES: Record<
  keyof typeof SKILLS_REQUEST_SCHEMAS | keyof typeof SKILLS_RESPONSE_SCHEMAS,
  Record<string, Example>
> = {
  TenantSkillPut: { deploy: { summary: 'A Markdown skill with its description', value: deploy } },
  SessionSkillsPut: { review: { summary: "The session's skills (replaces its set)", value: sessionSet } },
  Skill: { deploy: { summary: 'The stored skill', value: skill } },
  SkillList: {
    skills: { summary: 'Names and descriptions, sorted by name', value: { skills: [{ name: 'deploy', description: deploy.description }] } },
  },
  SkillDeleted: { deleted: { summary: 'Removed', value: { name: 'deploy', deleted: true } } },
};
