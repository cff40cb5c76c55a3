import { compactInputHint, compactOutputHint } from './schema-hints';
import { schemaToTs } from './schema-to-ts';

describe('compact hints', () => {
  it.each([
    [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, '{ a: string }'],
    [{ type: 'object', properties: { 'a-b': { type: 'integer' } } }, '{ "a-b"?: number }'],
    [{ type: 'object' }, '{ ... }'],
    [{ type: 'object', properties: { x: { anyOf: [{ type: 'string' }, { type: 'null' }] } } }, '{ x?: string | null }'],
    [{ type: 'object', properties: { x: { type: 'array', items: { type: 'number' } } } }, '{ x?: Array<number> }'],
    ['nope', 'unknown'],
  ])('input %j → %s', (schema, hint) => {
    expect(compactInputHint(schema)).toBe(hint);
  });

  it('shows outputs only when complete', () => {
    expect(compactOutputHint({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] })).toBeUndefined();
    expect(compactOutputHint({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false })).toBe(
      '{ a: string }',
    );
    expect(compactOutputHint({ type: 'array', items: { type: 'string', nullable: true } })).toBe('Array<string | null>');
    expect(compactOutputHint({ $ref: '#/x', type: 'string' })).toBeUndefined();
    expect(compactOutputHint({})).toBe('unknown');
  });

  it('bounds input hints', () => {
    const properties = Object.fromEntries(Array.from({ length: 40 }, (_, index) => [`field${index}`, { type: 'string' }]));
    const hint = compactInputHint({ type: 'object', properties });
    expect(hint.length).toBeLessThanOrEqual(300);
    expect(hint.endsWith('; ... }')).toBe(true);
  });
});

describe('schemaToTs', () => {
  it('renders unions, enums, intersections and JSDoc', () => {
    expect(schemaToTs({ enum: ['a', 1, null] })).toBe('"a" | 1 | null');
    expect(schemaToTs({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'boolean' } }] })).toBe('string | Array<boolean>');
    expect(
      schemaToTs({
        allOf: [
          { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
          { type: 'object', properties: { b: { type: 'number' } } },
        ],
      }),
    ).toBe('{\n  a: string;\n} & {\n  b?: number;\n}');
    expect(
      schemaToTs({ type: 'object', properties: { a: { type: 'string', description: 'ends */ here' } }, additionalProperties: true }),
    ).toBe('{\n  /** ends *\\/ here */\n  a?: string;\n  [key: string]: unknown;\n}');
    expect(schemaToTs({ type: ['string', 'null'] })).toBe('string | null');
    expect(schemaToTs({ $ref: '#/defs/x' })).toBe('unknown');
  });

  it('stays bounded for deep and wide schemas', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let index = 0; index < 50; index += 1) {
      deep = { type: 'object', properties: { next: deep } };
    }
    expect(schemaToTs(deep)).toContain('unknown');
    const wide = {
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 5000 }, (_, index) => [`f${index}`, { type: 'object', properties: { a: { type: 'string' } } }]),
      ),
    };
    expect(schemaToTs(wide).length).toBeLessThan(20_000);
  });
});
