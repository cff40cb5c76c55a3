import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/** What a sealed value starts with: the format's version. */
const FORMAT = 'cmh1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** HKDF's salt and info: a key derived for this use only, whatever else the secret is used for. */
const SALT = 'codemode secrets';
const INFO = 'tenant tool headers v1';

/** What a sealed value is bound to: a value moved to another tool, tenant or endpoint does not open. */
export interface HeaderBinding {
  readonly tenant: string;
  readonly tool: string;
  readonly endpoint: string | undefined;
}

/** A sealed value that no configured key opens (a key rotated away, or the value was tampered with). */
export class SealedHeadersError extends Error {
  constructor() {
    super('the tool headers cannot be decrypted with CODEMODE_SECRETS_KEY or CODEMODE_SECRETS_KEY_PREVIOUS; register the headers again.');
    this.name = 'SealedHeadersError';
  }
}

interface VaultKey {
  /** First bytes of the key's SHA-256: names the key a value was sealed with, never the key. */
  readonly id: string;
  readonly key: Buffer;
}

/**
 * Tenant tool credential headers kept encrypted at rest (SPEC §18): AES-256-GCM under a key derived
 * by HKDF-SHA256 from `CODEMODE_SECRETS_KEY`, the tenant, tool and endpoint as associated data. A
 * sealed value names its key's id, so after a rotation values sealed under
 * `CODEMODE_SECRETS_KEY_PREVIOUS` still open until `npm run secrets:rotate` seals them again.
 * Format: `cmh1.<key id>.<iv>.<tag>.<ciphertext>`, base64url parts.
 */
export class HeaderVault {
  private readonly current: VaultKey;
  private readonly keys: readonly VaultKey[];

  /** @param current `CODEMODE_SECRETS_KEY`; @param previous `CODEMODE_SECRETS_KEY_PREVIOUS` (both checked by libs/config). */
  constructor(current: string, previous?: string) {
    this.current = deriveKey(current);
    this.keys = previous === undefined ? [this.current] : [this.current, deriveKey(previous)];
  }

  seal(headers: Readonly<Record<string, string>>, binding: HeaderBinding): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(associatedData(binding));
    const sealed = Buffer.concat([cipher.update(JSON.stringify(headers), 'utf8'), cipher.final()]);
    return [
      FORMAT,
      this.current.id,
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      sealed.toString('base64url'),
    ].join('.');
  }

  /** @throws SealedHeadersError when no configured key opens it for this binding */
  open(sealed: string, binding: HeaderBinding): Record<string, string> {
    const [format, id, iv, tag, body, ...rest] = sealed.split('.');
    const key = this.keys.find((candidate) => candidate.id === id);
    if (format !== FORMAT || key === undefined || body === undefined || rest.length > 0) throw new SealedHeadersError();
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAAD(associatedData(binding));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      const clear = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
      return JSON.parse(clear.toString('utf8')) as Record<string, string>;
    } catch {
      throw new SealedHeadersError();
    }
  }

  /** Whether `sealed` is under the current key already (`secrets:rotate` leaves it). */
  isCurrent(sealed: string): boolean {
    return sealed.split('.')[1] === this.current.id;
  }
}

function deriveKey(secret: string): VaultKey {
  const key = Buffer.from(hkdfSync('sha256', secret, SALT, INFO, 32));
  return { id: createHash('sha256').update(key).digest('base64url').slice(0, 8), key };
}

function associatedData(binding: HeaderBinding): Buffer {
  return Buffer.from(JSON.stringify([binding.tenant, binding.tool, binding.endpoint ?? null]), 'utf8');
}
