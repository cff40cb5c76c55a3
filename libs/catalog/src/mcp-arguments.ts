import { McpArgumentShapeError, McpMissingArgumentError } from './errors';
import { isRecord, schemaProperties, schemaRequired } from './json-schema';

/**
 * Turns the arguments of a guest call `MCP.<server>.<tool>(...)` into the tool's input object
 * (SPEC §5): at most one argument, which must be a plain object (absent means `{}`); top-level
 * schema `default`s fill absent or undefined fields; a required field still missing after that
 * is reported by name.
 * @throws McpArgumentShapeError, McpMissingArgumentError
 */
export function mapMcpArguments(schema: unknown, args: readonly unknown[]): Record<string, unknown> {
  if (args.length > 1) {
    throw new McpArgumentShapeError();
  }
  const [first] = args;
  if (first !== undefined && !isRecord(first)) {
    throw new McpArgumentShapeError();
  }
  const input: Record<string, unknown> = first === undefined ? {} : { ...first };
  const withDefaults = applySchemaDefaults(schema, input);
  const missing = schemaRequired(schema).filter((key) => !Object.hasOwn(withDefaults, key) || withDefaults[key] === undefined);
  if (missing.length > 0) {
    throw new McpMissingArgumentError(missing);
  }
  return withDefaults;
}

/** Copies `input` and fills top-level fields that are absent or undefined from schema defaults. */
export function applySchemaDefaults(schema: unknown, input: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = { ...input };
  for (const [key, descriptor] of Object.entries(schemaProperties(schema))) {
    if (!isRecord(descriptor) || !Object.hasOwn(descriptor, 'default')) {
      continue;
    }
    if (Object.hasOwn(result, key) && result[key] !== undefined) {
      continue;
    }
    // Schemas are untrusted: defining an own property keeps a `__proto__` key a plain value.
    Object.defineProperty(result, key, {
      value: structuredClone(descriptor.default),
      enumerable: true,
      configurable: true,
      writable: true,
    });
  }
  return result;
}
