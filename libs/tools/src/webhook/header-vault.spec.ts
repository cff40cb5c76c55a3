import { HeaderVault, SealedHeadersError } from './header-vault';

const KEY = 'k'.repeat(32);
const OTHER = 'o'.repeat(40);
const BINDING = { tenant: 'acme', tool: 'lookup_order', endpoint: 'https://orders.example/lookup' };
const HEADERS = { Authorization: 'Bearer canary-7f3a', 'X-Api-Key': 'k-1' };

describe('HeaderVault (SPEC §18)', () => {
  it('seals headers so that the value never appears in clear, and opens them for the same binding', () => {
    const vault = new HeaderVault(KEY);
    const sealed = vault.seal(HEADERS, BINDING);
    expect(sealed).toMatch(/^cmh1\.[\w-]{8}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('canary');
    expect(Buffer.from(sealed.split('.')[4], 'base64url').toString('latin1')).not.toContain('canary');
    expect(vault.open(sealed, BINDING)).toEqual(HEADERS);
    // A fresh IV each time: the same headers never seal to the same text.
    expect(vault.seal(HEADERS, BINDING)).not.toBe(sealed);
  });

  it('refuses a value moved to another tenant, tool or endpoint, or tampered with', () => {
    const vault = new HeaderVault(KEY);
    const sealed = vault.seal(HEADERS, BINDING);
    expect(() => vault.open(sealed, { ...BINDING, tenant: 'other' })).toThrow(SealedHeadersError);
    expect(() => vault.open(sealed, { ...BINDING, tool: 'ship_order' })).toThrow(SealedHeadersError);
    expect(() => vault.open(sealed, { ...BINDING, endpoint: 'https://evil.example/' })).toThrow(SealedHeadersError);
    const parts = sealed.split('.');
    const body = Buffer.from(parts[4], 'base64url');
    body[0] ^= 1;
    parts[4] = body.toString('base64url');
    expect(() => vault.open(parts.join('.'), BINDING)).toThrow(SealedHeadersError);
    expect(() => vault.open('not sealed', BINDING)).toThrow(
      'the tool headers cannot be decrypted with CODEMODE_SECRETS_KEY or CODEMODE_SECRETS_KEY_PREVIOUS; register the headers again.',
    );
  });

  it('opens values sealed under the previous key after a rotation, and seals under the current one', () => {
    const before = new HeaderVault(OTHER);
    const old = before.seal(HEADERS, BINDING);
    const rotated = new HeaderVault(KEY, OTHER);
    expect(rotated.isCurrent(old)).toBe(false);
    expect(rotated.open(old, BINDING)).toEqual(HEADERS);
    const resealed = rotated.seal(rotated.open(old, BINDING), BINDING);
    expect(rotated.isCurrent(resealed)).toBe(true);
    expect(() => new HeaderVault(KEY).open(old, BINDING)).toThrow(SealedHeadersError);
    expect(new HeaderVault(KEY).open(resealed, BINDING)).toEqual(HEADERS);
  });
});
