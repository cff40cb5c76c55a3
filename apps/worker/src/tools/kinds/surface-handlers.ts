import type { WorkerSurfaceName } from '@codemode/catalog';
import { isSkillName, type SessionRef } from '@codemode/contracts';
import type { SkillLedger } from '@codemode/events';
import type { NodeSurface } from '../../nodes/node-surface';
import { ToolCallError } from '../tool-call-error';
import type { CalledDetail } from './tool-kind';

/** One call of a platform surface (SPEC §15), once policy admitted it and `tool.called` is recorded. */
export interface SurfaceCall {
  ref: SessionRef;
  input: unknown;
  signal: AbortSignal;
}

/** How the worker answers one surface. */
export interface SurfaceHandler {
  /** A throw is the call's rejection in the guest (its message as the Error's). */
  answer(call: SurfaceCall): Promise<unknown>;
  /** What `tool.called` records of a call beyond the common fields. */
  called?(input: unknown): CalledDetail;
}

/** What the surfaces read. */
export interface SurfaceDeps {
  skills: Pick<SkillLedger, 'list' | 'read'>;
  nodes: Pick<NodeSurface, 'list' | 'get' | 'invoke'>;
  /**
   * SPEC §17: the deadline of a `nodes.invoke` (`CODEMODE_NODE_INVOKE_TIMEOUT_MS`), the node's own and
   * not the leg's: a run may park while it waits, and the next `wait` resumes it to the answer.
   */
  nodeInvokeTimeoutMs: number;
}

/**
 * The worker's answers to SPEC §15's platform surfaces, one per surface the catalog's table says
 * the worker answers (`WorkerSurfaceName`: the compiler holds the two together). Those the
 * platform answers (`agents.run`) have none: `PlatformAnsweredKind` waits for them.
 */
export function surfaceHandlers(deps: SurfaceDeps): Readonly<Record<WorkerSurfaceName, SurfaceHandler>> {
  return {
    'nodes.list': { answer: ({ ref }) => deps.nodes.list(ref.tenant) },
    'nodes.get': { answer: ({ ref, input }) => deps.nodes.get(ref.tenant, fieldOf(input, 'idOrName')) },
    'nodes.invoke': {
      answer: ({ ref, input, signal }) => deps.nodes.invoke(ref.tenant, input, { timeoutMs: deps.nodeInvokeTimeoutMs, signal }),
      called: nodeCallOf,
    },
    'skills.list': { answer: ({ ref }) => deps.skills.list(ref) },
    'skills.read': { answer: ({ ref, input }) => readSkill(deps.skills, ref, input) },
  };
}

function fieldOf(input: unknown, field: string): unknown {
  return typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[field] : undefined;
}

/** SPEC §15: what `tool.called` says of a `nodes.invoke` call (node and command, when they are strings). */
function nodeCallOf(input: unknown): CalledDetail {
  const node = fieldOf(input, 'node');
  const command = fieldOf(input, 'command');
  return { ...(typeof node === 'string' ? { node } : {}), ...(typeof command === 'string' ? { command } : {}) };
}

async function readSkill(skills: SurfaceDeps['skills'], ref: SessionRef, input: unknown): Promise<unknown> {
  const name = fieldOf(input, 'name');
  const skill = isSkillName(name) ? await skills.read(ref, name) : null;
  if (!skill) throw new ToolCallError(`unknown skill: ${String(name)}`);
  return skill;
}
