import { isRecord, tsPropertyName } from './json-schema';

/**
 * One-line TypeScript-style hints for the quick index and handle metadata, following OpenClaw's
 * compact hints: bounded in length, depth, properties and union sizes. A hint is `complete` only
 * when it describes every value the schema accepts; output hints are shown only when complete, so
 * the model never builds field-dependent logic on a guessed shape.
 */

interface Hint {
  readonly text: string;
  readonly complete: boolean;
}

interface HintLimits {
  readonly maxChars: number;
  readonly maxDepth: number;
  readonly maxProperties: number;
}

const INPUT_LIMITS: HintLimits = { maxChars: 300, maxDepth: 4, maxProperties: 16 };
const OUTPUT_LIMITS: HintLimits = { maxChars: 850, maxDepth: 6, maxProperties: 20 };
const MAX_UNION_VARIANTS = 4;
const MAX_LITERAL_VALUES = 8;
const MAX_LITERAL_CHARS = 96;
const MAX_PROPERTY_NAME_CHARS = 128;
/** Keywords this renderer cannot express; their presence makes a hint incomplete. */
const UNSUPPORTED_KEYWORDS = [
  '$ref',
  '$dynamicRef',
  '$recursiveRef',
  'allOf',
  'patternProperties',
  'unevaluatedProperties',
  'dependentSchemas',
  'dependencies',
  'if',
  'then',
  'else',
  'prefixItems',
  'unevaluatedItems',
];

const UNKNOWN: Hint = { text: 'unknown', complete: false };
const complete = (text: string): Hint => ({ text, complete: true });

function literal(value: unknown): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') {
    return JSON.stringify(value);
  }
  return typeof value === 'number' && Number.isFinite(value) ? JSON.stringify(value) : undefined;
}

function literalUnion(values: unknown): Hint | undefined {
  if (!Array.isArray(values) || values.length === 0 || values.length > MAX_LITERAL_VALUES) {
    return undefined;
  }
  const rendered = values.map(literal);
  if (rendered.some((value) => value === undefined)) {
    return undefined;
  }
  const text = [...new Set(rendered as string[])].join(' | ');
  return text.length <= MAX_LITERAL_CHARS ? complete(text) : undefined;
}

function unionHint(schema: Record<string, unknown>, depth: number, limits: HintLimits): Hint | undefined {
  const hasAnyOf = Object.hasOwn(schema, 'anyOf');
  const hasOneOf = Object.hasOwn(schema, 'oneOf');
  if (!hasAnyOf && !hasOneOf) {
    return undefined;
  }
  const variants = hasAnyOf ? schema.anyOf : schema.oneOf;
  // Both keywords, or a union next to a base shape, is an intersection this renderer cannot show.
  const hasBase = ['const', 'enum', 'type', 'properties', 'required', 'additionalProperties', 'items'].some((key) =>
    Object.hasOwn(schema, key),
  );
  if ((hasAnyOf && hasOneOf) || hasBase || !Array.isArray(variants) || variants.length === 0) {
    return UNKNOWN;
  }
  if (variants.every((variant) => isRecord(variant) && Object.hasOwn(variant, 'const'))) {
    const literals = literalUnion(variants.map((variant) => (variant as Record<string, unknown>).const));
    if (literals) {
      return literals;
    }
  }
  if (variants.length > MAX_UNION_VARIANTS) {
    return UNKNOWN;
  }
  const rendered = variants.map((variant) => renderHint(variant, depth + 1, limits));
  return rendered.every((hint) => hint.complete) ? complete([...new Set(rendered.map((hint) => hint.text))].join(' | ')) : UNKNOWN;
}

function objectHint(schema: Record<string, unknown>, depth: number, limits: HintLimits): Hint {
  const properties = isRecord(schema.properties) ? schema.properties : undefined;
  const requiredList = Array.isArray(schema.required) ? schema.required : [];
  if (!properties) {
    return requiredList.length === 0 && schema.additionalProperties === false ? complete('{}') : { text: '{ ... }', complete: false };
  }
  const required = new Set(requiredList.filter((key): key is string => typeof key === 'string'));
  const names = Object.keys(properties).filter((name) => name.length <= MAX_PROPERTY_NAME_CHARS);
  const requiredNames = names.filter((name) => required.has(name)).sort();
  const optionalNames = names.filter((name) => !required.has(name)).sort();
  const ordered = [...requiredNames, ...optionalNames];
  const selected = ordered.slice(0, limits.maxProperties);
  const missingRequired = [...required].some((name) => !Object.hasOwn(properties, name));
  let omitted =
    selected.length < Object.keys(properties).length ||
    missingRequired ||
    schema.additionalProperties === true ||
    isRecord(schema.additionalProperties);
  let isComplete = !omitted && schema.additionalProperties === false;
  const parts: string[] = [];
  for (const name of selected) {
    const hint = renderHint(properties[name], depth, limits);
    const part = `${tsPropertyName(name)}${required.has(name) ? '' : '?'}: ${hint.text}`;
    if (`{ ${[...parts, part].join('; ')} }`.length > limits.maxChars) {
      omitted = true;
      isComplete = false;
      break;
    }
    isComplete &&= hint.complete;
    parts.push(part);
  }
  if (parts.length === 0) {
    return ordered.length === 0 && !omitted ? { text: '{}', complete: isComplete } : { text: '{ ... }', complete: false };
  }
  return { text: `{ ${parts.join('; ')}${omitted ? '; ...' : ''} }`, complete: isComplete };
}

function withNullable(schema: Record<string, unknown>): Record<string, unknown> {
  if (schema.nullable !== true) {
    return schema;
  }
  const types: unknown[] = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? (schema.type as unknown[]) : [];
  return { ...schema, nullable: false, type: [...new Set([...types, 'null'])] };
}

function renderHint(value: unknown, depth: number, limits: HintLimits): Hint {
  if (!isRecord(value)) {
    return UNKNOWN;
  }
  // `{}` accepts any value: `unknown` is its exact rendering, not a truncation.
  if (Object.keys(value).length === 0) {
    return complete('unknown');
  }
  if (depth >= limits.maxDepth) {
    return UNKNOWN;
  }
  const schema = withNullable(value);
  const finish = (hint: Hint): Hint =>
    UNSUPPORTED_KEYWORDS.some((key) => Object.hasOwn(schema, key)) ? { ...hint, complete: false } : hint;
  const union = unionHint(schema, depth, limits);
  if (union) {
    return finish(union);
  }
  const constant = literal(schema.const);
  if (constant !== undefined) {
    return finish(complete(constant));
  }
  const enumHint = literalUnion(schema.enum);
  if (enumHint) {
    return finish(enumHint);
  }
  const type = schema.type;
  if (Array.isArray(type)) {
    if (type.length === 0 || type.length > MAX_UNION_VARIANTS || !type.every((entry) => typeof entry === 'string')) {
      return UNKNOWN;
    }
    const rendered = type.map((entry) => renderHint({ ...schema, type: entry }, depth + 1, limits));
    return rendered.every((hint) => hint.complete)
      ? finish(complete([...new Set(rendered.map((hint) => hint.text))].join(' | ')))
      : UNKNOWN;
  }
  switch (type) {
    case 'integer':
    case 'number':
      return finish(complete('number'));
    case 'string':
    case 'boolean':
    case 'null':
      return finish(complete(type));
    case 'array': {
      const item = renderHint(schema.items, depth + 1, limits);
      return finish({ text: `Array<${item.text}>`, complete: item.complete });
    }
    case 'object':
      return finish(objectHint(schema, depth + 1, limits));
    default:
      return UNKNOWN;
  }
}

/** Compact input hint; `unknown` when the schema is absent, unreadable or too large. */
export function compactInputHint(schema: unknown): string {
  if (!isRecord(schema)) {
    return 'unknown';
  }
  const hint = schema.type === 'object' ? objectHint(schema, 0, INPUT_LIMITS) : renderHint(schema, 0, INPUT_LIMITS);
  return hint.text.length <= INPUT_LIMITS.maxChars ? hint.text : 'unknown';
}

/** Compact output hint, or undefined unless it is complete and fits. */
export function compactOutputHint(schema: unknown): string | undefined {
  const hint = renderHint(schema, 0, OUTPUT_LIMITS);
  return hint.complete && hint.text.length <= OUTPUT_LIMITS.maxChars ? hint.text : undefined;
}
