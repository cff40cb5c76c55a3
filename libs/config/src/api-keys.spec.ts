import { parseApiKeyGrants, parseApiKeys } from './api-keys';
import { ConfigError } from './errors';

describe('parseApiKeyGrants', () => {
  it('reads key:tenant as an operator key and key:tenant:role with its role', () => {
    const grants = parseApiKeyGrants('k1:acme, k2:acme:agent,k3:beta:operator');
    expect([...grants!]).toEqual([
      ['k1', { tenant: 'acme', role: 'operator' }],
      ['k2', { tenant: 'acme', role: 'agent' }],
      ['k3', { tenant: 'beta', role: 'operator' }],
    ]);
    expect(parseApiKeys('k1:acme,k2:acme:agent')).toEqual(
      new Map([
        ['k1', 'acme'],
        ['k2', 'acme'],
      ]),
    );
  });

  it('keeps colons inside keys and a tenant named like a role', () => {
    expect([...parseApiKeyGrants('a:b:c:acme,k:agent')!]).toEqual([
      ['a:b:c', { tenant: 'acme', role: 'operator' }],
      ['k', { tenant: 'agent', role: 'operator' }],
    ]);
  });

  it('is off when unset and refuses malformed pairs', () => {
    expect(parseApiKeyGrants(undefined)).toBeNull();
    expect(parseApiKeyGrants('  ')).toBeNull();
    expect(() => parseApiKeyGrants('nokey')).toThrow(ConfigError);
    expect(() => parseApiKeyGrants(':acme:agent')).toThrow(ConfigError);
    expect(() => parseApiKeyGrants('k:acme:Agent')).toThrow('role Agent must be written in lower case (operator or agent).');
  });
});
