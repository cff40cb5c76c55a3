/** Shell `exec` and `process` tools (SPEC §7): process sessions, output buffers, process actions. */
export { ProcessRegistry } from './process-registry';
export type { ExecContext, ProcessContext, ProcessRegistryOptions, ShellScope } from './process-registry';
export type { ShellEvent, ShellEventListener } from './shell-events';
export { OUTPUT_EVENT_MAX_CHARS } from './shell-events';
export { rebuildSessions } from './history';
export type { RebuildOptions, RecordedShellEvent } from './history';
export { answerFromHistory } from './answer-from-history';
export type { SessionView } from './session-view';
export type { ProcessSpawnerOptions } from './process-spawner';
export * from './errors';
export { texts as SHELL_TEXTS } from './texts';
export { bwrapFds, bwrapInvocation, type SandboxIdentity, type SandboxLimits, type SandboxSetup } from './sandbox/bwrap-invocation';
export {
  decideConfinement,
  type Confinement,
  type ConfinementDecision,
  type SandboxSetting,
  type TenancyMode,
} from './sandbox/confinement';
export { probeSandbox, type SandboxProbe } from './sandbox/sandbox-probe';
export { writeSandboxEtc } from './sandbox/sandbox-etc';
export { removeSessionWorkspace, sessionWorkspace, tenantWorkspaces } from './workspace/session-workspace';
export { WorkspaceJanitor, type WorkspaceJanitorOptions, type WorkspaceSweep } from './workspace/workspace-janitor';
export { yieldDelay } from './exec-answers';
export { exitNotice, type ExitNoticeInput } from './exit-notice';
export { TenantCallBound } from './tenant-call-bound';
