import { ConfigError } from './errors';

/** Shortest `CODEMODE_SECRETS_KEY` (SPEC §18): any string of at least this many characters. */
export const MIN_SECRETS_KEY_CHARS = 32;

/** `CODEMODE_SECRETS_KEY` and `CODEMODE_SECRETS_KEY_PREVIOUS`: what tenant tool headers are encrypted under (SPEC §18). */
export interface SecretsKeys {
  readonly current: string;
  /** Still read after a rotation, until `npm run secrets:rotate` re-encrypted everything. */
  readonly previous?: string;
}

type Env = Record<string, string | undefined>;

/** Null when no key is set (a tenant tool with headers is then refused with 503); a short key refuses the start. */
export function readSecretsKeys(env: Env): SecretsKeys | null {
  const current = readKey(env, 'CODEMODE_SECRETS_KEY');
  const previous = readKey(env, 'CODEMODE_SECRETS_KEY_PREVIOUS');
  if (current === undefined) {
    if (previous !== undefined) {
      throw new ConfigError(
        'CODEMODE_SECRETS_KEY_PREVIOUS',
        'is set without CODEMODE_SECRETS_KEY; set the new key in CODEMODE_SECRETS_KEY.',
      );
    }
    return null;
  }
  return previous === undefined ? { current } : { current, previous };
}

function readKey(env: Env, name: string): string | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (value.length < MIN_SECRETS_KEY_CHARS) {
    throw new ConfigError(
      name,
      `must be at least ${MIN_SECRETS_KEY_CHARS} characters (it has ${value.length}): it derives the key tenant tool headers are encrypted with; set a longer random string, e.g. from \`openssl rand -base64 48\`.`,
    );
  }
  return value;
}
