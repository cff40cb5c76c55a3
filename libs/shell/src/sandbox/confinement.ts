import type { SandboxIdentity } from './bwrap-invocation';
import type { SandboxProbe } from './sandbox-probe';

/** `CODEMODE_SHELL_SANDBOX` (SPEC §10). */
export type SandboxSetting = 'auto' | 'bwrap' | 'none';
/** SPEC §10 "Mode": `multi` when the deployment has API keys. */
export type TenancyMode = 'multi' | 'single';

/** Whether this worker's commands run confined now. */
export type ConfinementDecision = { kind: 'bwrap' } | { kind: 'none' } | { kind: 'unavailable'; reason: string };

/** How one shell command runs: the decision, with the tenant's host identity when confined. */
export type Confinement = Exclude<ConfinementDecision, { kind: 'bwrap' }> | { kind: 'bwrap'; identity: SandboxIdentity | null };

/**
 * The one rule for whether a command runs confined (SPEC §10): `none` never confines; a working
 * sandbox always does; a sandbox that does not work fails every command under `bwrap`, and under
 * `auto` too once the deployment is multi-tenant, where running a tenant's command unconfined
 * would hand it the worker. Only a single-tenant `auto` deployment falls back to running
 * unconfined (the worker warns at start).
 */
export function decideConfinement(setting: SandboxSetting, probe: SandboxProbe, mode: TenancyMode): ConfinementDecision {
  if (setting === 'none') return { kind: 'none' };
  if (probe.ok) return { kind: 'bwrap' };
  if (setting === 'bwrap' || mode === 'multi') return { kind: 'unavailable', reason: probe.reason };
  return { kind: 'none' };
}
