import { MAX_TOOL_HEADER_VALUE_BYTES, reservedToolHeaderMessage } from '@codemode/contracts';
import { checkTenantToolPut } from './tenant-tools-body';

const TOOL = { description: 'Look up an order', endpoint: 'https://orders.example/lookup' };

describe('checkTenantToolPut (SPEC §18)', () => {
  it('answers the tool named by the path and its headers apart, never inside the tool', () => {
    const check = checkTenantToolPut('lookup_order', { ...TOOL, name: 'ignored', headers: { Authorization: 'Bearer s3cret' } });
    expect(check).toEqual({
      ok: true,
      tool: { name: 'lookup_order', ...TOOL, inputSchema: { type: 'object' } },
      headers: { Authorization: 'Bearer s3cret' },
    });
    expect(checkTenantToolPut('lookup_order', TOOL)).toMatchObject({ ok: true, headers: undefined });
    expect(checkTenantToolPut('lookup_order', { ...TOOL, headers: {} })).toMatchObject({ ok: true, headers: {} });
  });

  it('refuses a blank name and a body that is not a client tool, naming the field', () => {
    expect(checkTenantToolPut('  ', TOOL)).toEqual({ ok: false, error: 'name: name must not be blank', field: 'name' });
    expect(checkTenantToolPut('t', { ...TOOL, timeoutMs: 5 })).toMatchObject({ ok: false, field: 'timeoutMs' });
  });

  it.each([
    'Host',
    'content-length',
    'Content-Type',
    'Transfer-Encoding',
    'CONNECTION',
    'Idempotency-Key',
    'X-Codemode-Signature',
    'x-codemode-anything',
  ])('refuses the header %s, which code mode sets itself', (name) => {
    expect(checkTenantToolPut('t', { ...TOOL, headers: { [name]: 'v' } })).toEqual({
      ok: false,
      error: `headers.${name}: ${reservedToolHeaderMessage(name)}`,
      field: `headers.${name}`,
    });
  });

  it('refuses more than 16 headers, a name outside the token charset, a value over 4 KiB or with a line break, a name twice', () => {
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`X-H${i}`, 'v']));
    expect(checkTenantToolPut('t', { ...TOOL, headers: many })).toEqual({
      ok: false,
      error: 'headers: at most 16 headers; remove 1.',
      field: 'headers',
    });
    const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`X-H${i}`, 'v']));
    expect(checkTenantToolPut('t', { ...TOOL, headers: sixteen })).toMatchObject({ ok: true });
    expect(checkTenantToolPut('t', { ...TOOL, headers: { 'Bad Name': 'v' } })).toMatchObject({ ok: false, field: 'headers.Bad Name' });
    expect(checkTenantToolPut('t', { ...TOOL, headers: { 'X-Key': 'é'.repeat(MAX_TOOL_HEADER_VALUE_BYTES / 2 + 1) } })).toEqual({
      ok: false,
      error: 'headers.X-Key: the value of X-Key is over 4096 bytes; shorten it.',
      field: 'headers.X-Key',
    });
    expect(checkTenantToolPut('t', { ...TOOL, headers: { 'X-Key': 'k'.repeat(MAX_TOOL_HEADER_VALUE_BYTES) } })).toMatchObject({ ok: true });
    expect(checkTenantToolPut('t', { ...TOOL, headers: { 'X-Key': 'a\r\nX-Evil: 1' } })).toMatchObject({
      ok: false,
      field: 'headers.X-Key',
    });
    expect(checkTenantToolPut('t', { ...TOOL, headers: { 'X-Key': 'a', 'x-key': 'b' } })).toEqual({
      ok: false,
      error: 'headers.x-key: x-key is given twice (header names are case-insensitive); keep one.',
      field: 'headers.x-key',
    });
    expect(checkTenantToolPut('t', { ...TOOL, headers: { 'X-Key': 5 } })).toMatchObject({ ok: false, field: 'headers.X-Key' });
  });
});
