import { shellRouteRefusal } from './shell-route-policy';
import { mergePolicies } from './policy-matcher';

describe('shellRouteRefusal', () => {
  it('answers the SPEC messages for deny and approve, null for allow', () => {
    const policy = mergePolicies({ rules: [{ tool: 'exec', decision: 'deny' }] }, { rules: [{ tool: 'process', decision: 'approve' }] });
    expect(shellRouteRefusal(policy, 'exec')).toBe('code mode tool exec is blocked by policy.');
    expect(shellRouteRefusal(policy, 'process')).toBe("code mode tool process needs an operator's approval; call it from a cell.");
    expect(shellRouteRefusal({ rules: [] }, 'exec')).toBeNull();
  });

  it('decides as the cells do: globs, defaults, and the session over the tenant', () => {
    expect(shellRouteRefusal({ rules: [], default: 'deny' }, 'process')).toBe('code mode tool process is blocked by policy.');
    expect(shellRouteRefusal({ rules: [{ tool: '*', decision: 'approve' }] }, 'exec')).toBe(
      "code mode tool exec needs an operator's approval; call it from a cell.",
    );
    const overridden = mergePolicies({ rules: [{ tool: 'exec', decision: 'deny' }] }, { rules: [{ tool: 'exec', decision: 'allow' }] });
    expect(shellRouteRefusal(overridden, 'exec')).toBeNull();
  });
});
