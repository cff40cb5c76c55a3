/**
 * Every string the shell tools answer with. Clients and models match on these (SPEC §7), so they
 * live in one place and mirror OpenClaw's `exec`/`process` tools word for word.
 */
import { PROCESS_ACTIONS } from '@codemode/contracts';

export const texts = {
  stillRunning: (sessionId: string, pid: number, tool: string) =>
    `Command still running (session ${sessionId}, pid ${pid}). Use ${tool} (list/poll/log/write/send-keys/submit/paste/kill/clear/remove) for follow-up.`,
  exitedWithCode: (code: number) => `(Command exited with code ${code})`,
  noOutput: '(no output)',
  commandNotFound: 'Command not found',
  notExecutable: 'Command not executable (permission denied)',
  timedOut: (seconds: number) =>
    `Command timed out after ${seconds} seconds. If this command is expected to take longer, re-run with a higher timeout (e.g., exec timeout=300).`,
  abortedBySignal: (signal: string) => `Command aborted by signal ${signal}`,
  emptyCommand: 'Provide a command to start.',
  cannotDetach: 'A command run with awaitResults:true cannot be detached: drop background:true or awaitResults.',
  elevatedUnavailable: 'elevated exec is not available in this service.',
  unknownHost: (host: string) => `host must be one of auto, sandbox, gateway or node; got ${JSON.stringify(host)}.`,
  unknownNode: (node: string) => `unknown node: ${node}`,
  workdirOutside: (workdir: string, root: string) => `workdir "${workdir}" is outside the workspace ${root}.`,
  workdirMissing: (workdir: string) => `workdir "${workdir}" is not a directory.`,
  ptyUnavailable: 'pty:true needs util-linux `script` on the worker, and it is not installed.',
  spawnFailed: (reason: string) => `Failed to start the command: ${reason}`,
  shuttingDown: 'The shell worker is shutting down; run the command again.',
  sessionDeletedBeforeRun: 'The session was deleted while this command was starting; it was not run.',
  sessionDeletedWhileStarting: 'The session was deleted while this command was starting; the command was stopped.',
  sandboxUnavailable: (reason: string) => `shell sandbox unavailable: ${reason}`,
  shellQuota: 'shell process quota reached for this tenant; kill or wait for a running session first.',
  shellCallQuota: 'shell call quota reached for this tenant; wait for its shell calls in flight to answer first.',
  workspaceOverLimit: (maxBytes: number) => `workspace over its size limit (${maxBytes} bytes); remove files first.`,
  workspaceOverFileLimit: (maxFiles: number) => `workspace over its file limit (${maxFiles} files); remove files first.`,
  workspaceSizeStopped: (maxBytes: number) => `workspace over its size limit (${maxBytes} bytes); the command was stopped.`,
  workspaceFilesStopped: (maxFiles: number) => `workspace over its file limit (${maxFiles} files); the command was stopped.`,

  invalidAction: `Invalid process action. Expected one of: ${PROCESS_ACTIONS.join(', ')}`,
  sessionIdRequired: 'sessionId is required for this action.',
  noSession: (id: string) => `No session found for ${id}`,
  noActiveSession: (id: string) => `No active session found for ${id}`,
  notBackgrounded: (id: string) => `Session ${id} is not backgrounded.`,
  stdinNotWritable: (id: string) => `Session ${id} stdin is not writable.`,
  noFinishedSession: (id: string) => `No finished session found for ${id}`,

  invalidInput: (tool: string, field: string, detail: string) => `Invalid ${tool} input: ${field}: ${detail}`,

  noSessions: 'No running or recent sessions.',
  noNewOutput: '(no new output)',
  stillRunningPoll: 'Process still running.',
  exitedWith: (label: string) => `Process exited with ${label}.`,
  exitedWithTimeout: 'Process exited with timeout.',
  lostPoll: 'Process lost: the worker running it stopped. Its recorded output stays readable with log.',
  noOutputYet: '(no output yet)',
  noOutputRecorded: '(no output recorded)',
  logTailNote: (shown: number, total: number) => `[showing last ${shown} of ${total} lines; pass offset/limit to page]`,
  pendingDropped: '[earlier output is omitted from this poll; use action=log with offset and limit to inspect retained output]',
  retentionCap: (kept: number) => `[earlier output was dropped; only the newest ${kept} chars are kept]`,
  inputWaitHint: (idle: string, tool: string) =>
    `No new output for ${idle}; this session may be waiting for input. Use ${tool} write, send-keys, submit, or paste to provide input.`,

  wrote: (bytes: number, id: string, eof: boolean) => `Wrote ${bytes} bytes to session ${id}${eof ? ' (stdin closed)' : ''}.`,
  sentKeys: (bytes: number, id: string) => `Sent ${bytes} bytes to session ${id}.`,
  noKeyData: 'No key data provided.',
  submitted: (id: string) => `Submitted session ${id} (sent CR).`,
  pasted: (chars: number, id: string) => `Pasted ${chars} chars to session ${id}.`,
  noPasteText: 'No paste text provided.',
  killRequested: (id: string) => `Termination requested for session ${id}.`,
  cleared: (id: string) => `Cleared session ${id}.`,
  removed: (id: string, running: boolean) => `Removed session ${id}${running ? ' (termination requested)' : ''}.`,
} as const;
