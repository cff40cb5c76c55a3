import type { CatalogEntry } from './catalog-entry';
import { makeHostId } from './catalog-entry';
import { AGENTS_API_PATH, NODES_API_PATH, SKILLS_API_PATH } from './platform-api';

/** One row of the table: a surface and what the host does with its calls. */
interface SurfaceRow {
  readonly name: string;
  readonly description: string;
  /** Made again, it changes nothing the run saw: a restartSafe cell may call it (`RepeatableCalls`). */
  readonly replaySafe: boolean;
  readonly apiPath: string;
  /** Who answers its calls: the worker (a handler there), or the platform (POST …/tool-results). */
  readonly answeredBy: 'worker' | 'platform';
  /** A run has it only when its session has `agents: true`. */
  readonly withAgents: boolean;
}

/**
 * SPEC §15's platform surfaces as the host sees them: each guest call of one (`skills.read(name)`)
 * is an ordinary `callValue` bridge request whose tool is the dotted surface name, and each name
 * has a synthetic catalog entry here so policy (the policy name is the dotted name), approvals,
 * `tool.called`/`tool.settled`, telemetry's `callCount` and replay treat it as any tool call.
 * They are not catalog entries: not searchable, not in `catalog.all()`, not tool globals, not in
 * `catalogSize`; `SessionToolCatalog.byCallableName` falls back to them. The one table of them:
 * a surface is added here (and answered by a worker handler, or by the platform).
 */
const SURFACE_TABLE = [
  row('nodes.list', "Lists the tenant's paired nodes: id, name, platform, connected, commands.", true, NODES_API_PATH, 'worker'),
  row('nodes.get', 'Resolves a paired node by exact id, then by display name.', true, NODES_API_PATH, 'worker'),
  row('nodes.invoke', 'Invokes one command of a paired node (node.invoke, node.listDir).', false, NODES_API_PATH, 'worker'),
  row('skills.list', "Lists the skills' names and descriptions (the session's shadow the tenant's).", true, SKILLS_API_PATH, 'worker'),
  row('skills.read', 'Reads one skill: its name, description and Markdown content.', true, SKILLS_API_PATH, 'worker'),
  row(
    'agents.run',
    'Runs a sub-agent of the platform; answered by the platform (POST …/tool-results).',
    false,
    AGENTS_API_PATH,
    'platform',
    true,
  ),
] as const;

/** The dotted name of a surface the worker answers: each has one handler there. */
export type WorkerSurfaceName = Extract<(typeof SURFACE_TABLE)[number], { answeredBy: 'worker' }>['name'];

function row<Name extends string, By extends 'worker' | 'platform'>(
  name: Name,
  description: string,
  replaySafe: boolean,
  apiPath: string,
  answeredBy: By,
  withAgents = false,
): SurfaceRow & { name: Name; answeredBy: By } {
  return { name, description, replaySafe, apiPath, answeredBy, withAgents };
}

const ROWS: ReadonlyMap<string, SurfaceRow> = new Map(SURFACE_TABLE.map((surface) => [surface.name, surface]));

const SURFACES: ReadonlyMap<string, CatalogEntry> = new Map(
  SURFACE_TABLE.map((surface) => [
    surface.name,
    {
      hostId: makeHostId('platform', 'platform', surface.name),
      toolName: surface.name,
      callableName: surface.name,
      source: 'platform',
      description: surface.description,
      replaySafe: surface.replaySafe,
      apiPath: surface.apiPath,
    },
  ]),
);

/** What a run's session enables beyond the surfaces every cell has. */
export interface SurfaceOptions {
  /** SPEC §15: the session has `agents: true`. */
  agents: boolean;
}

function enabled(entry: CatalogEntry, options: SurfaceOptions): boolean {
  return options.agents || ROWS.get(entry.callableName)?.withAgents !== true;
}

/** Who answers calls of a platform surface's entry; undefined for any other entry. */
export function surfaceAnsweredBy(entry: CatalogEntry): 'worker' | 'platform' | undefined {
  return entry.source === 'platform' ? ROWS.get(entry.toolName)?.answeredBy : undefined;
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
