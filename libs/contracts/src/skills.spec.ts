import { isSkillName, MAX_SKILL_BYTES, SessionSkillsPutSchema, SKILL_TOO_LARGE, skillBytes, TenantSkillPutSchema } from './skills';

describe('skills (SPEC §15)', () => {
  it.each(['a', 'deploy', 'my.skill_v2-final', 'A'.repeat(64), '...', '.hidden', '__proto__'])('%s is a skill name', (name) => {
    expect(isSkillName(name)).toBe(true);
  });

  it.each(['', '.', '..', 'a'.repeat(65), 'with space', 'a/b', 'ü', 'a:b', 42, null])('%p is not a skill name', (name) => {
    expect(isSkillName(name)).toBe(false);
  });

  it('counts UTF-8 bytes of description and content as Buffer does, lone surrogates as U+FFFD', () => {
    for (const text of ['ascii', 'é', '日本語', '😀', 'a\ud800b', '\udc00', '\ud83d']) {
      expect(skillBytes({ description: text, content: text })).toBe(2 * Buffer.byteLength(text, 'utf8'));
    }
  });

  it('takes a skill of exactly 256 KiB and refuses one byte more, naming content', () => {
    const exact = { description: 'd', content: 'x'.repeat(MAX_SKILL_BYTES - 1) };
    expect(TenantSkillPutSchema.safeParse(exact).success).toBe(true);
    const over = TenantSkillPutSchema.safeParse({ ...exact, description: 'dd' });
    expect(over.success ? null : over.error.issues.map((issue) => [issue.path, issue.message])).toEqual([[['content'], SKILL_TOO_LARGE]]);
  });

  it('refuses duplicate names and more than 256 skills in a session set', () => {
    const dup = SessionSkillsPutSchema.safeParse({
      skills: [
        { name: 'a', description: '', content: '' },
        { name: 'a', description: '', content: '' },
      ],
    });
    expect(dup.success ? null : dup.error.issues[0]).toMatchObject({ path: ['skills', 1, 'name'], message: 'duplicate skill name a' });
    const many = SessionSkillsPutSchema.safeParse({
      skills: Array.from({ length: 257 }, (_, i) => ({ name: `s${i}`, description: '', content: '' })),
    });
    expect(many.success ? null : many.error.issues[0]).toMatchObject({ path: ['skills'], message: 'at most 256 skills' });
  });
});
