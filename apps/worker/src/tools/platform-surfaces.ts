import { isSkillName, type SessionRef } from '@codemode/contracts';
import type { SkillLedger } from '@codemode/events';
import { ToolCallError } from './tool-call-error';

/** One call of a platform surface (SPEC §15), once policy admitted it and `tool.called` is recorded. */
export interface SurfaceCall {
  ref: SessionRef;
  input: unknown;
  signal: AbortSignal;
}

/** Answers one surface's calls; a throw is the call's rejection in the guest (its message as the Error's). */
export type SurfaceHandler = (call: SurfaceCall) => Promise<unknown>;

/** What the surfaces read. */
export interface SurfaceDeps {
  skills: SkillLedger;
}

/**
 * The worker's answers to SPEC §15's platform surfaces, keyed by the dotted name their calls
 * carry (`RunToolHost` dispatches every `source: 'platform'` entry here). `agents.run` has none:
 * the platform answers it (`RunToolHost.isPlatformTool`, `awaitPlatform`).
 */
export function surfaceHandlers(deps: SurfaceDeps): ReadonlyMap<string, SurfaceHandler> {
  return new Map<string, SurfaceHandler>([
    ['skills.list', ({ ref }) => deps.skills.list(ref)],
    ['skills.read', ({ ref, input }) => readSkill(deps.skills, ref, input)],
  ]);
}

async function readSkill(skills: SkillLedger, ref: SessionRef, input: unknown): Promise<unknown> {
  const name = typeof input === 'object' && input !== null ? (input as { name?: unknown }).name : undefined;
  const skill = isSkillName(name) ? await skills.read(ref, name) : null;
  if (!skill) throw new ToolCallError(`unknown skill: ${String(name)}`);
  return skill;
}
