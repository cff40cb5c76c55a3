import { z } from 'zod';
import { HandleMetadataSchema } from './tools';

/**
 * The catalog as a cell sees it, sent with the cell to the sandbox: enough to install one async
 * global per non-MCP tool, `catalog.all()`, and the `MCP.<server>.<tool>` functions. Everything
 * else (search, describe, API files, argument checks, the calls themselves) goes through the
 * bridge to the host.
 */
export const GuestCatalogSchema = z.object({
  /** Core and client tools, in catalog order: the async globals and `catalog.all()`. */
  globals: z.array(z.object({ metadata: HandleMetadataSchema, replaySafe: z.boolean(), idempotent: z.boolean().optional() })),
  /** MCP servers under `MCP.<serverIdentifier>`, each tool under its lowerCamelCase identifier. */
  mcp: z.array(
    z.object({
      serverIdentifier: z.string(),
      serverName: z.string(),
      tools: z.array(
        z.object({
          toolIdentifier: z.string(),
          metadata: HandleMetadataSchema,
          /** SPEC §16: a `restartSafe` cell may call it. */
          idempotent: z.boolean().optional(),
        }),
      ),
    }),
  ),
  /**
   * SPEC §15's platform surfaces the run has (`skills.list`, `skills.read`, `agents.run` with
   * `agents: true`): the guest installs `agents` only when `agents.run` is listed, and a
   * restartSafe cell may call the replay-safe ones. Absent: `skills` only.
   */
  surfaces: z.array(z.object({ name: z.string(), replaySafe: z.boolean() })).optional(),
});
export type GuestCatalog = z.infer<typeof GuestCatalogSchema>;
