import { z } from 'zod';
import { ToolSourceSchema } from './tools';

/** What a guest tool handle carries, and what it serializes to when returned (SPEC §4). */
export const HandleMetadataSchema = z.object({
  callableName: z.string(),
  toolName: z.string(),
  label: z.string().optional(),
  description: z.string(),
  source: ToolSourceSchema,
  apiPath: z.string().optional(),
  input: z.unknown().optional(),
  output: z.unknown().optional(),
});
export type HandleMetadata = z.infer<typeof HandleMetadataSchema>;

/**
 * The catalog as a cell sees it, sent with the cell to the sandbox: enough to install one async
 * global per non-MCP tool, `catalog.all()`, and the `MCP.<server>.<tool>` functions. Everything
 * else (search, describe, API files, argument checks, the calls themselves) goes through the
 * bridge to the host.
 */
export const GuestCatalogSchema = z.object({
  /** Core and client tools, in catalog order: the async globals and `catalog.all()`. */
  globals: z.array(z.object({ metadata: HandleMetadataSchema, replaySafe: z.boolean() })),
  /** MCP servers under `MCP.<serverIdentifier>`, each tool under its lowerCamelCase identifier. */
  mcp: z.array(
    z.object({
      serverIdentifier: z.string(),
      serverName: z.string(),
      tools: z.array(
        z.object({
          toolIdentifier: z.string(),
          metadata: HandleMetadataSchema,
        }),
      ),
    }),
  ),
});
export type GuestCatalog = z.infer<typeof GuestCatalogSchema>;
