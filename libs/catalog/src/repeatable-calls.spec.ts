import type { GuestCatalog } from '@codemode/contracts';
import { RepeatableCalls } from './repeatable-calls';

const metadata = (callableName: string, toolName = callableName) =>
  ({ callableName, toolName, source: 'client', description: '', input: 'unknown' }) as GuestCatalog['globals'][number]['metadata'];

const catalog: GuestCatalog = {
  globals: [
    { metadata: metadata('read'), replaySafe: true },
    { metadata: metadata('charge'), replaySafe: false, idempotent: true },
    { metadata: metadata('send'), replaySafe: false },
  ],
  mcp: [
    {
      serverIdentifier: 'github',
      serverName: 'github',
      tools: [
        { toolIdentifier: 'getIssue', metadata: metadata('MCP.github.getIssue', 'get_issue'), idempotent: true },
        { toolIdentifier: 'createIssue', metadata: metadata('MCP.github.createIssue', 'create_issue') },
      ],
    },
  ],
  surfaces: [
    { name: 'skills.read', replaySafe: true },
    { name: 'agents.run', replaySafe: false },
  ],
};

describe('RepeatableCalls', () => {
  const repeatable = new RepeatableCalls(catalog);

  it.each([
    ['a replay-safe global', 'callValue', { tool: 'read' }, true],
    ['an idempotent global', 'callValue', { tool: 'charge' }, true],
    ['a global that is neither', 'callValue', { tool: 'send' }, false],
    ['a replay-safe surface', 'callValue', { tool: 'skills.read' }, true],
    ['agents.run', 'callValue', { tool: 'agents.run' }, false],
    ['an unknown tool', 'callValue', { tool: 'nope' }, false],
    ['an idempotent MCP tool', 'namespace', { server: 'github', tool: 'get_issue' }, true],
    ['an MCP tool that is not idempotent', 'namespace', { server: 'github', tool: 'create_issue' }, false],
    ['an MCP tool of another server', 'namespace', { server: 'gitlab', tool: 'get_issue' }, false],
    ['an MCP tool named by its identifier, not its name', 'namespace', { server: 'github', tool: 'getIssue' }, false],
    ['a global named as an MCP call', 'namespace', { server: 'github', tool: 'read' }, false],
    ['a method that is no tool call', 'store', { tool: 'read' }, false],
    ['unreadable args', 'callValue', null, false],
  ])('%s: %s', (_what, method, args, expected) => {
    expect(repeatable.toolCall(method, args)).toBe(expected);
  });

  it.each([
    ['a replay-safe global', 'callValue', { tool: 'read' }, true],
    ['an idempotent global (it takes effect, once)', 'callValue', { tool: 'charge' }, false],
    ['a global that is neither', 'callValue', { tool: 'send' }, false],
    ['a replay-safe surface', 'callValue', { tool: 'skills.read' }, true],
    ['agents.run', 'callValue', { tool: 'agents.run' }, false],
    ['an unknown tool', 'callValue', { tool: 'nope' }, false],
    ['an idempotent MCP tool', 'namespace', { server: 'github', tool: 'get_issue' }, false],
    ['a replay-safe global named as an MCP call', 'namespace', { server: 'github', tool: 'read' }, false],
    ['a method that is no tool call', 'store', { tool: 'read' }, false],
    ['unreadable args', 'callValue', null, false],
  ])('changes nothing, %s: %s', (_what, method, args, expected) => {
    expect(repeatable.changesNothing(method, args)).toBe(expected);
  });

  it('reads the catalog as a cell request carries it; none: nothing is repeatable', () => {
    expect(RepeatableCalls.fromJson(JSON.stringify(catalog)).toolCall('callValue', { tool: 'charge' })).toBe(true);
    expect(RepeatableCalls.fromJson(undefined).toolCall('callValue', { tool: 'read' })).toBe(false);
  });
});
