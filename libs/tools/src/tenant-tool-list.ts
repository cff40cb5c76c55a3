import type { TenantTool } from '@codemode/contracts';
import type { EventLoopSlices } from './core/event-loop-slices';

/**
 * The tenant's tools (SPEC §18) as `TenantToolsLedger.read` answers them (name → stored JSON),
 * parsed one tool at a time with a slice check between (256 tools of ~136 KB each), by name so
 * that the same tools always make the same catalog. The name is the hash field's, whatever the
 * JSON says.
 */
export async function readTenantToolList(tools: readonly [string, Buffer][], slices: EventLoopSlices): Promise<TenantTool[]> {
  const parsed: TenantTool[] = [];
  for (const [name, json] of [...tools].sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))) {
    await slices.pause();
    parsed.push({ ...(JSON.parse(json.toString('utf8')) as TenantTool), name });
  }
  return parsed;
}
