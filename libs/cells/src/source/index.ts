export { checkExecInput, type ExecInputCheck } from './exec-input';
export { checkWaitInput, type WaitInputCheck } from './wait-input';
export { checkCellSource } from './source-check';
export { detectModuleAccess } from './module-access';
export { isShellShaped } from './shell-shape';
export { findSyntaxError } from './syntax-check';
export { SHELL_COMMAND_NAMES } from './shell-commands';
export * from './messages';
