import { readSecretsKeys } from './secrets-key-settings';

describe('readSecretsKeys (SPEC §18)', () => {
  it('answers null without a key, the keys when set', () => {
    expect(readSecretsKeys({})).toBeNull();
    expect(readSecretsKeys({ CODEMODE_SECRETS_KEY: '' })).toBeNull();
    expect(readSecretsKeys({ CODEMODE_SECRETS_KEY: 'a'.repeat(32) })).toEqual({ current: 'a'.repeat(32) });
    expect(readSecretsKeys({ CODEMODE_SECRETS_KEY: 'a'.repeat(32), CODEMODE_SECRETS_KEY_PREVIOUS: 'b'.repeat(40) })).toEqual({
      current: 'a'.repeat(32),
      previous: 'b'.repeat(40),
    });
  });

  it('refuses a key shorter than 32 characters with a sentence that says what to do', () => {
    expect(() => readSecretsKeys({ CODEMODE_SECRETS_KEY: 'short' })).toThrow(
      'CODEMODE_SECRETS_KEY must be at least 32 characters (it has 5): it derives the key tenant tool headers are encrypted with; set a longer random string, e.g. from `openssl rand -base64 48`.',
    );
    expect(() => readSecretsKeys({ CODEMODE_SECRETS_KEY: 'a'.repeat(32), CODEMODE_SECRETS_KEY_PREVIOUS: 'b'.repeat(31) })).toThrow(
      /^CODEMODE_SECRETS_KEY_PREVIOUS must be at least 32 characters/,
    );
    expect(() => readSecretsKeys({ CODEMODE_SECRETS_KEY_PREVIOUS: 'b'.repeat(32) })).toThrow(
      'CODEMODE_SECRETS_KEY_PREVIOUS is set without CODEMODE_SECRETS_KEY; set the new key in CODEMODE_SECRETS_KEY.',
    );
  });
});
