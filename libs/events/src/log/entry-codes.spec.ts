import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EVENT_TYPES } from '@codemode/contracts';
import { StoreCommandError } from '../platform/errors';
import { compactDataText, EVENT_TYPE_CODES, eventTypeOf } from './entry-codes';
import { decodeEntry } from './event-encoding';

describe('entry codes', () => {
  test('every type has its own one-character code, none a name', () => {
    const codes = EVENT_TYPES.map((type) => EVENT_TYPE_CODES[type]);
    expect(new Set(codes).size).toBe(EVENT_TYPES.length);
    for (const code of codes) expect(code).toMatch(/^[A-Za-z]$/);
  });

  test('lua/includes/entry-codes.lua writes the same codes', () => {
    const lua = readFileSync(join(__dirname, '..', 'lua', 'includes', 'entry-codes.lua'), 'utf8');
    const table = lua.slice(lua.indexOf('local TYPE_CODES = {'), lua.indexOf('}', lua.indexOf('local TYPE_CODES = {')));
    const written = Object.fromEntries([...table.matchAll(/\['([a-z.]+)'\] = '([A-Za-z])'/g)].map(([, type, code]) => [type, code]));
    expect(written).toEqual(EVENT_TYPE_CODES);
  });

  test('a stored type reads as its type, by code or by name', () => {
    for (const type of EVENT_TYPES) {
      expect(eventTypeOf(EVENT_TYPE_CODES[type])).toBe(type);
      expect(eventTypeOf(type)).toBe(type);
    }
  });

  test("a code this release does not know reads as it is stored (a later release's type), never as another type", () => {
    expect(eventTypeOf('#')).toBe('#');
    expect(eventTypeOf('')).toBe('');
  });

  test("run.started's data comes back byte for byte, a worker id needing escapes too", () => {
    for (const workerId of ['vm-4218-749f43', 'a"b\\c\u2028', '']) {
      const written = `{"workerId":${JSON.stringify(workerId)},"epoch":7}`;
      expect(compactDataText('run.started', `~w${JSON.stringify(workerId)}`, 'cm_r', '7')).toBe(written);
    }
  });

  test("a tool call's data comes back byte for byte, a tool name holding | and quotes too", () => {
    for (const tool of ['ls', 'a|b"c|', '']) {
      const name = JSON.stringify(tool);
      expect(compactDataText('tool.called', `~tcallValue:3|openclaw|17|4|${name}`, 'cm_r', '1')).toBe(
        `{"callId":"bridge:callValue:3","tool":${name},"source":"openclaw","inputBytes":17,"callKey":"cm_r:4"}`,
      );
      expect(compactDataText('tool.settled', `~snamespace:12|5|43|${name}`, 'cm_r', '1')).toBe(
        `{"callId":"bridge:namespace:12","tool":${name},"ok":true,"durationMs":5,"resultBytes":43}`,
      );
    }
  });

  test('data kept as it is, or packed, is not read as compact; compact data of the wrong shape is a store error', () => {
    expect(compactDataText('tool.called', '{"callId":"x"}', 'cm_r', '1')).toBeUndefined();
    expect(compactDataText('run.completed', '~1I9arRsPArwA=', 'cm_r', '1')).toBeUndefined();
    expect(compactDataText('tool.settled', '~w"vm-1"', 'cm_r', '1')).toBeUndefined();
    expect(() => compactDataText('tool.settled', '~scallValue:1|5', 'cm_r', '1')).toThrow(StoreCommandError);
  });

  test('an entry kept compact decodes as the same entry kept in full', () => {
    const full = decodeEntry([
      '1796598211540-0',
      ['type', 'run.started', 'runId', 'cm_r', 'epoch', '2', 'data', '{"workerId":"vm-1","epoch":2}'],
    ]);
    const compact = decodeEntry(['1796598211540-0', ['type', 's', 'runId', 'cm_r', 'epoch', '2', 'data', '~w"vm-1"']]);
    expect(compact).toEqual(full);
    expect(compact).toEqual({
      id: '1796598211540-0',
      type: 'run.started',
      runId: 'cm_r',
      at: expect.any(String),
      epoch: 2,
      data: { workerId: 'vm-1', epoch: 2 },
    });
  });
});
