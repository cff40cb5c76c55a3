/** Minimal readers over JSON-Schema-shaped values. Schemas from clients and MCP servers are
 * untrusted, so every reader tolerates any value and never walks prototypes. */

export type JsonSchema = Record<string, unknown>;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Own `properties` of an object schema, or `{}`. */
export function schemaProperties(schema: unknown): Record<string, unknown> {
  const properties = isRecord(schema) ? schema.properties : undefined;
  return isRecord(properties) ? properties : {};
}

/** String entries of `required`, or `[]`. */
export function schemaRequired(schema: unknown): string[] {
  const required = isRecord(schema) ? schema.required : undefined;
  return Array.isArray(required) ? required.filter((key): key is string => typeof key === 'string') : [];
}

/** Property names at any depth (up to 4 levels), for search indexing of core tools. */
export function schemaPropertyNames(schema: unknown, depth = 0, out: string[] = []): string[] {
  if (depth > 4 || !isRecord(schema)) {
    return out;
  }
  for (const [name, child] of Object.entries(schemaProperties(schema))) {
    out.push(name);
    schemaPropertyNames(child, depth + 1, out);
  }
  for (const keyword of ['items', 'anyOf', 'oneOf', 'allOf']) {
    const value = schema[keyword];
    for (const child of Array.isArray(value) ? value : [value]) {
      schemaPropertyNames(child, depth + 1, out);
    }
  }
  return out;
}

/** A property name as TypeScript writes it: bare when an identifier, quoted otherwise. */
export function tsPropertyName(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/u.test(name) ? name : JSON.stringify(name);
}
