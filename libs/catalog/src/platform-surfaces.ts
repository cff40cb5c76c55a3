import type { CatalogEntry } from './catalog-entry';
import { makeHostId } from './catalog-entry';
import { AGENTS_API_PATH, NODES_API_PATH, SKILLS_API_PATH } from './platform-api';

/**
 * SPEC §15's platform surfaces as the host sees them: each guest call of one (`skills.read(name)`)
 * is an ordinary `callValue` bridge request whose tool is the dotted surface name, and each name
 * has a synthetic catalog entry here so policy (the policy name is the dotted name), approvals,
 * `tool.called`/`tool.settled`, telemetry's `callCount` and replay treat it as any tool call.
 * They are not catalog entries: not searchable, not in `catalog.all()`, not tool globals, not in
 * `catalogSize`; `SessionToolCatalog.byCallableName` falls back to them.
 */
function surface(name: string, description: string, replaySafe: boolean, apiPath: string): CatalogEntry {
  return {
    hostId: makeHostId('platform', 'platform', name),
    toolName: name,
    callableName: name,
    source: 'platform',
    description,
    replaySafe,
    apiPath,
  };
}

const SURFACES: ReadonlyMap<string, CatalogEntry> = new Map(
  [
    surface('nodes.list', "Lists the tenant's paired nodes: id, name, platform, connected, commands.", true, NODES_API_PATH),
    surface('nodes.get', 'Resolves a paired node by exact id, then by display name.', true, NODES_API_PATH),
    surface('nodes.invoke', 'Invokes one command of a paired node (node.invoke, node.listDir).', false, NODES_API_PATH),
    surface('skills.list', "Lists the skills' names and descriptions (the session's shadow the tenant's).", true, SKILLS_API_PATH),
    surface('skills.read', 'Reads one skill: its name, description and Markdown content.', true, SKILLS_API_PATH),
    surface('agents.run', 'Runs a sub-agent of the platform; answered by the platform (POST …/tool-results).', false, AGENTS_API_PATH),
  ].map((entry) => [entry.callableName, entry]),
);

/** What a run's session enables beyond the surfaces every cell has. */
export interface SurfaceOptions {
  /** SPEC §15: the session has `agents: true`. */
  agents: boolean;
}

function enabled(entry: CatalogEntry, options: SurfaceOptions): boolean {
  return options.agents || !entry.callableName.startsWith('agents.');
}

/** The platform surface named `name`, if the run has it (`agents.*` only with `agents: true`). */
export function platformSurface(name: unknown, options: SurfaceOptions): CatalogEntry | undefined {
  const entry = typeof name === 'string' ? SURFACES.get(name) : undefined;
  return entry && enabled(entry, options) ? entry : undefined;
}

/** The surfaces a run has, as its guest catalog lists them (`GuestCatalog.surfaces`). */
export function platformSurfaces(options: SurfaceOptions): CatalogEntry[] {
  return [...SURFACES.values()].filter((entry) => enabled(entry, options));
}
