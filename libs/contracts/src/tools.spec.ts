import { ClientToolSchema, ClientToolsPutSchema, ToolsViewSchema } from './tools';

describe('ClientToolSchema', () => {
  it('defaults inputSchema to {type:"object"}', () => {
    expect(ClientToolSchema.parse({ name: 'x', description: 'd' }).inputSchema).toEqual({ type: 'object' });
  });

  it.each([
    ['http://127.0.0.1:8080/hook', true],
    ['https://example.com/tool', true],
    ['http://localhost/x', true],
    ['ftp://example.com/x', false],
    ['not a url', false],
    ['javascript:alert(1)', false],
  ])('endpoint %s valid=%s', (endpoint, valid) => {
    expect(ClientToolSchema.safeParse({ name: 'x', description: '', endpoint }).success).toBe(valid);
  });

  it('keeps idempotent (SPEC §16) and takes only a boolean', () => {
    expect(ClientToolSchema.parse({ name: 'x', description: '', idempotent: true }).idempotent).toBe(true);
    expect(ClientToolSchema.safeParse({ name: 'x', description: '', idempotent: 'yes' }).success).toBe(false);
  });

  it('bounds names, timeouts and schema sizes', () => {
    expect(ClientToolSchema.safeParse({ name: '', description: '' }).success).toBe(false);
    expect(ClientToolSchema.safeParse({ name: '   ', description: '' }).success).toBe(false);
    expect(ClientToolSchema.safeParse({ name: 'x'.repeat(129), description: '' }).success).toBe(false);
    expect(ClientToolSchema.safeParse({ name: 'x', description: '', timeoutMs: 50 }).success).toBe(false);
    expect(ClientToolSchema.safeParse({ name: 'x', description: '', timeoutMs: 5000 }).success).toBe(true);
    const huge = { type: 'object', description: 'y'.repeat(70 * 1024) };
    expect(ClientToolSchema.safeParse({ name: 'x', description: '', inputSchema: huge }).success).toBe(false);
    expect(ClientToolSchema.safeParse({ name: 'x', description: '', inputSchema: [] }).success).toBe(false);
  });
});

describe('ClientToolsPutSchema', () => {
  it('rejects duplicate names', () => {
    const result = ClientToolsPutSchema.safeParse({
      tools: [
        { name: 'a', description: '' },
        { name: 'a', description: '' },
      ],
    });
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toContain('duplicate client tool name: a');
  });

  it('accepts an empty list', () => {
    expect(ClientToolsPutSchema.parse({ tools: [] })).toEqual({ tools: [] });
  });
});

describe('ToolsViewSchema', () => {
  it('parses a catalog view', () => {
    const view = {
      catalog: [{ callableName: 'read', toolName: 'read', description: '', source: 'openclaw', input: 'unknown', replaySafe: true }],
      execDescription: 'x',
    };
    expect(ToolsViewSchema.parse(view)).toEqual(view);
  });
});
