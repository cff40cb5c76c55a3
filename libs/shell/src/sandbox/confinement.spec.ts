import { decideConfinement } from './confinement';

describe('decideConfinement (SPEC §10)', () => {
  const works = { ok: true } as const;
  const broken = { ok: false, reason: 'no user namespaces' } as const;

  it.each([
    ['auto', works, 'multi', { kind: 'bwrap' }],
    ['auto', works, 'single', { kind: 'bwrap' }],
    ['bwrap', works, 'single', { kind: 'bwrap' }],
    ['auto', broken, 'single', { kind: 'none' }],
    ['auto', broken, 'multi', { kind: 'unavailable', reason: 'no user namespaces' }],
    ['bwrap', broken, 'single', { kind: 'unavailable', reason: 'no user namespaces' }],
    ['bwrap', broken, 'multi', { kind: 'unavailable', reason: 'no user namespaces' }],
    ['none', works, 'multi', { kind: 'none' }],
    ['none', broken, 'single', { kind: 'none' }],
  ] as const)('%s with a %j sandbox in %s mode → %j', (setting, probe, mode, expected) => {
    expect(decideConfinement(setting, probe, mode)).toEqual(expected);
  });
});
