import { isSkillName, type SessionRef } from '@codemode/contracts';
import type { SkillLedger } from '@codemode/events';
import type { NodeSurface } from '../nodes/node-surface';
import { ToolCallError } from './tool-call-error';

/** One call of a platform surface (SPEC §15), once policy admitted it and `tool.called` is recorded. */
export interface SurfaceCall {
  ref: SessionRef;
  input: unknown;
  signal: AbortSignal;
  /** What is left of the leg's budget (ms): the longest a call may take. */
  budgetMs: number;
}

/** Answers one surface's calls; a throw is the call's rejection in the guest (its message as the Error's). */
export type SurfaceHandler = (call: SurfaceCall) => Promise<unknown>;

/** What the surfaces read. */
export interface SurfaceDeps {
  skills: SkillLedger;
  nodes: NodeSurface;
}

/**
 * The worker's answers to SPEC §15's platform surfaces, keyed by the dotted name their calls
 * carry (`RunToolHost` dispatches every `source: 'platform'` entry here). `agents.run` has none:
 * the platform answers it (`RunToolHost.isPlatformTool`, `awaitPlatform`).
 */
export function surfaceHandlers(deps: SurfaceDeps): ReadonlyMap<string, SurfaceHandler> {
  return new Map<string, SurfaceHandler>([
    ['nodes.list', ({ ref }) => deps.nodes.list(ref.tenant)],
    ['nodes.get', ({ ref, input }) => deps.nodes.get(ref.tenant, fieldOf(input, 'idOrName'))],
    [
      'nodes.invoke',
      ({ ref, input, signal, budgetMs }) => deps.nodes.invoke(ref.tenant, input, { timeoutMs: Math.max(1, budgetMs), signal }),
    ],
    ['skills.list', ({ ref }) => deps.skills.list(ref)],
    ['skills.read', ({ ref, input }) => readSkill(deps.skills, ref, input)],
  ]);
}

function fieldOf(input: unknown, field: string): unknown {
  return typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[field] : undefined;
}

async function readSkill(skills: SkillLedger, ref: SessionRef, input: unknown): Promise<unknown> {
  const name = typeof input === 'object' && input !== null ? (input as { name?: unknown }).name : undefined;
  const skill = isSkillName(name) ? await skills.read(ref, name) : null;
  if (!skill) throw new ToolCallError(`unknown skill: ${String(name)}`);
  return skill;
}
