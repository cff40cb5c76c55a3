import { isRecord, tsPropertyName } from './json-schema';

/**
 * JSON schema → TypeScript type text for the API declaration files. Objects, arrays, enums and
 * consts, unions (`anyOf`/`oneOf`), intersections (`allOf`), nullable and type lists, required vs
 * optional properties, property descriptions as JSDoc. Bounded: depth, properties per object,
 * union size and total nodes are capped, and anything past a cap renders as `unknown`, so an
 * attacker-sized client or MCP schema cannot blow up a declaration file.
 */

const MAX_DEPTH = 8;
const MAX_PROPERTIES = 64;
const MAX_UNION = 16;
const MAX_NODES = 2000;
const MAX_DOC_LINES = 12;
const MAX_DOC_CHARS = 1000;

interface RenderState {
  nodes: number;
}

/**
 * Makes text safe inside a JSDoc comment (SPEC §5): a star followed by a slash gets a backslash
 * between them, so a description cannot end the comment; nothing else changes (a glob such as
 * `**` + `/*.ext` keeps its characters and order, gaining only that backslash).
 */
export function escapeDocText(text: string): string {
  return text.replace(/\*\//gu, '*\\/');
}

/**
 * JSDoc lines for a description: its lines as written (trailing spaces and blank lines around it
 * dropped; indentation and blank lines inside kept), escaped by `escapeDocText`, bounded in lines
 * and characters.
 */
export function docComment(text: string | undefined, indent = ''): string[] {
  const all = (text ?? '')
    .slice(0, MAX_DOC_CHARS)
    .split(/\r?\n/u)
    .map((line) => escapeDocText(line.trimEnd()));
  const first = all.findIndex((line) => line !== '');
  const last = all.findLastIndex((line) => line !== '');
  const lines = first === -1 ? [] : all.slice(first, last + 1).slice(0, MAX_DOC_LINES);
  if (lines.length === 0) {
    return [];
  }
  if (lines.length === 1) {
    return [`${indent}/** ${lines[0]} */`];
  }
  return [`${indent}/**`, ...lines.map((line) => (line === '' ? `${indent} *` : `${indent} * ${line}`)), `${indent} */`];
}

function literalText(value: unknown): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') {
    return JSON.stringify(value);
  }
  return typeof value === 'number' && Number.isFinite(value) ? JSON.stringify(value) : undefined;
}

function joinUnion(parts: string[]): string {
  const unique = [...new Set(parts)];
  if (unique.includes('unknown')) {
    return 'unknown';
  }
  return unique.length === 0 ? 'never' : unique.map((part) => (part.includes('=>') ? `(${part})` : part)).join(' | ');
}

function renderObject(schema: Record<string, unknown>, indent: string, depth: number, state: RenderState): string {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string') : []);
  const names = Object.keys(properties);
  const additional = schema.additionalProperties;
  if (names.length === 0) {
    if (additional === false) {
      return 'Record<string, never>';
    }
    return `Record<string, ${isRecord(additional) ? render(additional, indent, depth + 1, state) : 'unknown'}>`;
  }
  const inner = `${indent}  `;
  const lines = ['{'];
  for (const name of names.slice(0, MAX_PROPERTIES)) {
    const property = properties[name];
    lines.push(...docComment(isRecord(property) && typeof property.description === 'string' ? property.description : undefined, inner));
    const optional = required.has(name) ? '' : '?';
    lines.push(`${inner}${tsPropertyName(name)}${optional}: ${render(property, inner, depth + 1, state)};`);
  }
  // TypeScript index signatures also cover the named properties, so only `unknown` is always valid.
  if (names.length > MAX_PROPERTIES || additional === true || isRecord(additional)) {
    lines.push(`${inner}[key: string]: unknown;`);
  }
  lines.push(`${indent}}`);
  return lines.join('\n');
}

function renderByType(type: string, schema: Record<string, unknown>, indent: string, depth: number, state: RenderState): string {
  switch (type) {
    case 'integer':
    case 'number':
      return 'number';
    case 'string':
    case 'boolean':
    case 'null':
      return type;
    case 'array': {
      const item = render(schema.items, indent, depth + 1, state);
      return `Array<${item}>`;
    }
    case 'object':
      return renderObject(schema, indent, depth, state);
    default:
      return 'unknown';
  }
}

function render(value: unknown, indent: string, depth: number, state: RenderState): string {
  state.nodes += 1;
  if (!isRecord(value) || depth > MAX_DEPTH || state.nodes > MAX_NODES) {
    return 'unknown';
  }
  const schema = value;
  const constant = literalText(schema.const);
  if (constant !== undefined) {
    return constant;
  }
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.length <= MAX_UNION) {
    const literals = schema.enum.map(literalText).filter((entry): entry is string => entry !== undefined);
    if (literals.length === schema.enum.length) {
      return joinUnion(literals);
    }
  }
  const variants = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (variants && variants.length > 0) {
    return variants.length <= MAX_UNION ? joinUnion(variants.map((variant) => render(variant, indent, depth + 1, state))) : 'unknown';
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0 && schema.allOf.length <= MAX_UNION) {
    const parts = schema.allOf.map((part) => render(part, indent, depth + 1, state)).filter((part) => part !== 'unknown');
    return parts.length === 0 ? 'unknown' : parts.map((part) => (part.includes('|') ? `(${part})` : part)).join(' & ');
  }
  const types = Array.isArray(schema.type)
    ? schema.type.filter((entry): entry is string => typeof entry === 'string')
    : typeof schema.type === 'string'
      ? [schema.type]
      : isRecord(schema.properties)
        ? ['object']
        : [];
  if (types.length === 0) {
    return 'unknown';
  }
  if (schema.nullable === true && !types.includes('null')) {
    types.push('null');
  }
  return joinUnion(types.map((type) => renderByType(type, schema, indent, depth, state)));
}

/** TypeScript type text for a schema; multi-line objects are indented from `indent`. */
export function schemaToTs(schema: unknown, indent = ''): string {
  return render(schema, indent, 0, { nodes: 0 });
}

/** Whether a call may omit its input object: no required property lacks a default. */
export function inputIsOptional(schema: unknown): boolean {
  if (!isRecord(schema)) {
    return true;
  }
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string') : [];
  return required.every((key) => {
    const property = properties[key];
    return isRecord(property) && Object.hasOwn(property, 'default');
  });
}
