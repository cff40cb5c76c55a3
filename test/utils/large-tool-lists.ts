export interface LargeTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** Bytes of one tool of `largeTools`: an 8000-character description and a ~55 KB schema. */
const TOOL_BYTES = 65_000;

/** `count` client tools named `<prefix><i>`, each ~65 KB: what makes a tool list costly to read or merge. */
export function largeTools(count: number, prefix: string): LargeTool[] {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 1000; i += 1) properties[`p${i}`] = { type: 'string', description: 'x'.repeat(20) };
  return Array.from({ length: count }, (_, i) => ({
    name: `${prefix}${i}`,
    description: 'd'.repeat(8000),
    inputSchema: { type: 'object', properties },
  }));
}

/** About `megabytes` MB of `largeTools`. */
export function toolsOfMegabytes(megabytes: number, prefix: string): LargeTool[] {
  return largeTools(Math.round((megabytes * 1e6) / TOOL_BYTES), prefix);
}
