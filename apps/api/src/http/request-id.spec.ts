import { REQUEST_ID_PATTERN, requestIdOf } from './request-id';

describe('requestIdOf (SPEC §19)', () => {
  it("keeps the caller's id when it matches [A-Za-z0-9._-]{1,128}", () => {
    expect(requestIdOf('abc.DEF_09-x')).toBe('abc.DEF_09-x');
    expect(requestIdOf('a'.repeat(128))).toBe('a'.repeat(128));
  });

  it('makes one for a missing, empty, too long, repeated or foreign-charactered id', () => {
    for (const header of [undefined, '', 'a'.repeat(129), ['a', 'b'], 'with space', 'new\nline', 'ü', 'a/b']) {
      const id = requestIdOf(header);
      expect(id).toMatch(REQUEST_ID_PATTERN);
      expect(id).not.toBe(header);
    }
  });

  it('makes a different id each time', () => {
    expect(requestIdOf(undefined)).not.toBe(requestIdOf(undefined));
  });
});
