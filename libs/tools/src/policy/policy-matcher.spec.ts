import type { Policy } from '@codemode/contracts';
import { decideTool, mergePolicies } from './policy-matcher';

describe('decideTool', () => {
  it('defaults to allow, or to the policy default', () => {
    expect(decideTool({ rules: [] }, 'read')).toBe('allow');
    expect(decideTool({ rules: [], default: 'deny' }, 'read')).toBe('deny');
    expect(decideTool({ rules: [{ tool: 'ls', decision: 'deny' }], default: 'approve' }, 'read')).toBe('approve');
  });

  it('matches exact names exactly', () => {
    const policy: Policy = { rules: [{ tool: 'exec', decision: 'deny' }] };
    expect(decideTool(policy, 'exec')).toBe('deny');
    expect(decideTool(policy, 'exec2')).toBe('allow');
    expect(decideTool(policy, 'Exec')).toBe('allow');
  });

  it('prefers an exact name over any glob, wherever it stands', () => {
    const policy: Policy = {
      rules: [
        { tool: 'exec', decision: 'approve' },
        { tool: '*', decision: 'deny' },
        { tool: 'exe*', decision: 'allow' },
      ],
    };
    expect(decideTool(policy, 'exec')).toBe('approve');
    expect(decideTool(policy, 'execute')).toBe('allow');
    expect(decideTool(policy, 'read')).toBe('deny');
  });

  it('prefers the longer glob, and the later of two equal ones', () => {
    const policy: Policy = {
      rules: [
        { tool: 'MCP.github.*', decision: 'approve' },
        { tool: 'MCP.*', decision: 'deny' },
        { tool: 'MCP.github.create_*', decision: 'deny' },
      ],
    };
    expect(decideTool(policy, 'MCP.github.list_issues')).toBe('approve');
    expect(decideTool(policy, 'MCP.github.create_issue')).toBe('deny');
    expect(decideTool(policy, 'MCP.slack.post')).toBe('deny');
    const equal: Policy = {
      rules: [
        { tool: 'a*', decision: 'deny' },
        { tool: '*b', decision: 'approve' },
      ],
    };
    expect(decideTool(equal, 'ab')).toBe('approve');
    expect(
      decideTool(
        {
          rules: [
            { tool: 'read', decision: 'deny' },
            { tool: 'read', decision: 'approve' },
          ],
        },
        'read',
      ),
    ).toBe('approve');
  });

  it('lets * match any run of characters, dots and the empty run included', () => {
    const policy: Policy = { rules: [{ tool: 'MCP.*.delete*', decision: 'deny' }] };
    expect(decideTool(policy, 'MCP.fs.delete')).toBe('deny');
    expect(decideTool(policy, 'MCP.a.b.delete_file')).toBe('deny');
    expect(decideTool(policy, 'MCP.fs.remove')).toBe('allow');
    expect(decideTool({ rules: [{ tool: 'a*a', decision: 'deny' }] }, 'a')).toBe('allow');
    expect(decideTool({ rules: [{ tool: 'a*a', decision: 'deny' }] }, 'aa')).toBe('deny');
    expect(decideTool({ rules: [{ tool: '*', decision: 'deny' }] }, 'anything.at.all')).toBe('deny');
  });

  it('treats regex characters in names literally', () => {
    const policy: Policy = { rules: [{ tool: 'a.b*', decision: 'deny' }] };
    expect(decideTool(policy, 'a.bc')).toBe('deny');
    expect(decideTool(policy, 'axbc')).toBe('allow');
  });
});

describe('mergePolicies', () => {
  it('puts session rules after the tenant rules and prefers the session default', () => {
    const tenant: Policy = { rules: [{ tool: 'exec', decision: 'deny' }], default: 'approve' };
    const session: Policy = { rules: [{ tool: 'exec', decision: 'allow' }] };
    const merged = mergePolicies(tenant, session);
    expect(merged).toEqual({
      rules: [
        { tool: 'exec', decision: 'deny' },
        { tool: 'exec', decision: 'allow' },
      ],
      default: 'approve',
    });
    expect(decideTool(merged, 'exec')).toBe('allow');
    expect(mergePolicies(tenant, { rules: [], default: 'allow' }).default).toBe('allow');
    expect(mergePolicies(null, null)).toEqual({ rules: [] });
  });

  it('keeps a tenant exact rule over a session glob', () => {
    const merged = mergePolicies({ rules: [{ tool: 'exec', decision: 'deny' }] }, { rules: [{ tool: '*', decision: 'allow' }] });
    expect(decideTool(merged, 'exec')).toBe('deny');
  });
});
