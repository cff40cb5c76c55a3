import { ClientToolSchema, MAX_CLIENT_TOOLS, type ClientTool, type RegisteredClientTool } from '@codemode/contracts';
import { OperatorToolLockedError, TooManyClientToolsError } from '../errors';
import { isOperatorTool, mergeRegistration } from './registration-merge';

/** Tools as the PUT schema leaves them (defaults applied), like the API hands them over. */
const tool = (input: Record<string, unknown>): ClientTool => ClientToolSchema.parse({ description: 'd', ...input });

const charge = tool({
  name: 'charge_card',
  description: 'Charges a card',
  inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
  outputSchema: { type: 'object' },
  endpoint: 'https://payments.example/charge',
  replaySafe: false,
  timeoutMs: 5000,
});
const operatorCharge: RegisteredClientTool = { ...charge, registeredBy: 'operator' };
const agentNote: RegisteredClientTool = { ...tool({ name: 'note', endpoint: 'https://agent.example/note' }), registeredBy: 'agent' };

describe('mergeRegistration', () => {
  it("records an operator's PUT as the operator's, replacing every tool (the agent's too)", () => {
    expect(mergeRegistration([operatorCharge, agentNote], [tool({ name: 'lookup' })], 'operator')).toEqual([
      { ...tool({ name: 'lookup' }), registeredBy: 'operator' },
    ]);
  });

  it("keeps the operator's tools when an agent's PUT leaves them out, and replaces only the agent's own", () => {
    const next = tool({ name: 'todo', endpoint: 'https://agent.example/todo' });
    expect(mergeRegistration([operatorCharge, agentNote], [next], 'agent')).toEqual([operatorCharge, { ...next, registeredBy: 'agent' }]);
    expect(mergeRegistration([operatorCharge, agentNote], [], 'agent')).toEqual([operatorCharge]);
  });

  it('lets an agent change its own tools in every field', () => {
    const moved = tool({ name: 'note', endpoint: 'https://elsewhere.example/note', replaySafe: true, inputSchema: { type: 'string' } });
    expect(mergeRegistration([operatorCharge, agentNote], [moved], 'agent')).toEqual([operatorCharge, { ...moved, registeredBy: 'agent' }]);
  });

  it.each([
    ['endpoint', { endpoint: 'http://127.0.0.1:9/steal' }],
    ['endpoint removed (calls would come back to the agent)', { endpoint: undefined }],
    ['input schema', { inputSchema: { type: 'object', properties: { amount: { type: 'string' } } } }],
    ['output schema', { outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } }],
    ['output schema removed', { outputSchema: undefined }],
    ['replaySafe', { replaySafe: true }],
    ['replaySafe unset (false before)', { replaySafe: undefined }],
    ['idempotent', { idempotent: true }],
  ])("refuses an agent's change of an operator tool's %s with the SPEC message", (_, change) => {
    const changed = { ...charge, ...change } as ClientTool;
    const attempt = () => mergeRegistration([operatorCharge], [changed], 'agent');
    expect(attempt).toThrow(OperatorToolLockedError);
    expect(attempt).toThrow('code mode tool charge_card was registered by an operator; an agent key cannot change it.');
  });

  it("keeps the operator's tool as stored when an agent re-sends it with its protected fields as they are", () => {
    const reordered = tool({
      ...charge,
      description: 'Now free of charge!',
      timeoutMs: 300_000,
      inputSchema: { required: ['amount'], properties: { amount: { type: 'number' } }, type: 'object' },
    });
    expect(mergeRegistration([operatorCharge], [reordered], 'agent')).toEqual([operatorCharge]);
  });

  it('protects tools stored before keys had roles (no registeredBy) as an operator’s', () => {
    const legacy: RegisteredClientTool = { ...charge };
    expect(isOperatorTool(legacy)).toBe(true);
    expect(() => mergeRegistration([legacy], [{ ...charge, endpoint: 'http://127.0.0.1:9/x' }], 'agent')).toThrow(OperatorToolLockedError);
    expect(mergeRegistration([legacy], [], 'agent')).toEqual([legacy]);
  });

  it("refuses an agent's list that, with the operator's kept, is over the per-session cap", () => {
    const operators = Array.from({ length: 10 }, (_, i): RegisteredClientTool => ({
      ...tool({ name: `op${i}` }),
      registeredBy: 'operator',
    }));
    const own = Array.from({ length: MAX_CLIENT_TOOLS - 9 }, (_, i) => tool({ name: `mine${i}` }));
    expect(() => mergeRegistration(operators, own, 'agent')).toThrow(TooManyClientToolsError);
    expect(mergeRegistration(operators, own.slice(1), 'agent')).toHaveLength(MAX_CLIENT_TOOLS);
  });
});
