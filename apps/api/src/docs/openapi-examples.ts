import { INVALID_SESSION_ID_MESSAGE, REPAIR_REASONS } from '@codemode/contracts';
import type {
  ApiErrorBody,
  ClientToolInput,
  CodeModeExecInput,
  CodeModeResult,
  EventPage,
  ProcessInput,
  RunView,
  SessionConfig,
  SessionPutInput,
  SessionView,
  ShellAnswer,
  ShellExecInput,
  ToolsView,
  TranscriptEntry,
  WaitInput,
} from '@codemode/contracts';
import { CONSOLE_EXAMPLES } from './console-examples';
import type { Example } from './example';
import type { SchemaName } from './openapi-schemas';
import { NODE_EXAMPLES } from './node-examples';
import { POLICY_EXAMPLES } from './policy-examples';
import { SKILLS_EXAMPLES } from './skills-examples';
import { TENANT_TOOLS_EXAMPLES } from './tenant-tools-examples';
import { SPEC_DEFAULT_LIMITS, SPEC_DEFAULT_SHELL } from '@codemode/config';

const RUN_ID = 'cm_0f8e2a4c-7b1d-4c39-9a52-5e6d7c8b9a01';
const AT = '2026-01-15T10:00:00.000Z';
const TELEMETRY = {
  catalogSize: 6,
  sources: { openclaw: 6, mcp: 0, client: 0 },
  searchCount: 0,
  describeCount: 0,
  callCount: 0,
  counterScope: RUN_ID,
  visibleTools: ['exec', 'wait'],
} satisfies Extract<CodeModeResult, { status: 'completed' }>['telemetry'];

const LIMITS = SPEC_DEFAULT_LIMITS;
const SHELL = SPEC_DEFAULT_SHELL;

const completed: CodeModeResult = {
  status: 'completed',
  value: 2,
  output: [{ type: 'text', text: 'adding' }],
  replaySafe: false,
  telemetry: TELEMETRY,
};
const waiting: CodeModeResult = {
  status: 'waiting',
  runId: RUN_ID,
  reason: 'pending_tools',
  pendingToolCalls: [{ id: 'bridge:callValue:1', method: 'callValue', tool: 'create_ticket', input: { title: 'Disk full' } }],
  replaySafe: false,
  telemetry: { ...TELEMETRY, sources: { openclaw: 6, mcp: 0, client: 1 }, catalogSize: 7, callCount: 1 },
};
const failedInput: CodeModeResult = {
  status: 'failed',
  error: 'code mode module access is disabled.',
  code: 'invalid_input',
  failurePhase: 'input',
  bridgeDispatchStarted: false,
  repair: { allowed: true, remainingAttempts: 1, reason: REPAIR_REASONS.allowed },
  replaySafe: false,
  telemetry: TELEMETRY,
};
const aborted: CodeModeResult = {
  status: 'failed',
  error: 'code mode execution aborted',
  code: 'aborted',
  failurePhase: 'host',
  bridgeDispatchStarted: true,
  replaySafe: false,
  telemetry: TELEMETRY,
};

const sessionConfig: SessionConfig = {
  sessionId: 's1',
  agentId: null,
  codeMode: { ...LIMITS, timeoutMs: 2000 },
  shell: SHELL,
  agents: false,
  repairAttempts: 2,
  notifyUrl: 'https://platform.example/shell-exits',
};
const sessionView: SessionView = {
  ...sessionConfig,
  counts: { runs: 1, events: 3, transcriptEntries: 2 },
  createdAt: AT,
  updatedAt: AT,
};
const runView: RunView = {
  runId: RUN_ID,
  sessionId: 's1',
  title: 'open a ticket',
  status: 'waiting',
  restartSafe: false,
  owner: 'worker-a-4711-1f2e',
  epoch: 1,
  createdAt: AT,
  startedAt: AT,
  endedAt: null,
  parkedAt: AT,
  expiresAt: '2026-01-15T10:15:00.000Z',
  updatedAt: AT,
  lastResult: waiting,
};
const clientTool: ClientToolInput = {
  name: 'create_ticket',
  description: 'Opens a support ticket.',
  inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
};
const toolsView: ToolsView = {
  catalog: [
    {
      callableName: 'create_ticket',
      toolName: 'create_ticket',
      description: 'Opens a support ticket.',
      source: 'client',
      input: 'unknown',
      replaySafe: false,
    },
  ],
  execDescription: 'Run JavaScript in a fresh sandbox. …',
};
const eventPage: EventPage = {
  events: [
    { id: '1736935200000-0', type: 'run.requested', runId: RUN_ID, at: AT, data: { title: 'add', restartSafe: false } },
    { id: '1736935200004-0', type: 'run.completed', runId: RUN_ID, at: AT, data: { result: completed } },
  ],
  next: null,
};
const transcript: { entries: TranscriptEntry[] } = {
  entries: [
    { kind: 'input', call: 'exec', runId: RUN_ID, at: AT, input: { title: 'add', code: 'return 1 + 1' } },
    { kind: 'result', call: 'exec', runId: RUN_ID, at: AT, result: completed },
  ],
};
const shellFinished: ShellAnswer = {
  text: 'hello',
  details: { status: 'completed', exitCode: 0, aggregated: 'hello\n', durationMs: 12, cwd: '/workspace' },
};
const shellRunning: ShellAnswer = {
  text: 'Command still running (session warm-otter, pid 4242). Use process (list/poll/log/write/send-keys/submit/paste/kill/clear/remove) for follow-up.',
  details: { status: 'running', sessionId: 'warm-otter', pid: 4242, startedAt: 1736935200000, tail: '' },
};
const processPolled: ShellAnswer = {
  text: 'step 3 of 5\n\nProcess still running.',
  details: { status: 'running', sessionId: 'warm-otter', stdinWritable: true, waitingForInput: false },
};
const processFailed: ShellAnswer = { text: 'No session found for warm-otter', details: { status: 'failed' } };

function error(body: ApiErrorBody): ApiErrorBody {
  return body;
}

/** Examples by component schema name; every name listed in `openapi-schemas.ts` has at least one. */
export const EXAMPLES: Record<SchemaName, Record<string, Example>> = {
  SessionPutInput: {
    limits: {
      summary: 'Shorter budget, own agent scope',
      value: { agentId: 'agent-7', codeMode: { timeoutMs: 2000 } } satisfies SessionPutInput,
    },
    notify: {
      summary: 'Hear of background shell exits',
      value: { notifyUrl: 'https://platform.example/shell-exits', shell: { notifyOnExitEmptySuccess: true } } satisfies SessionPutInput,
    },
  },
  CodeModeExecInput: {
    add: { summary: 'A cell', value: { title: 'add', code: 'text("adding"); return 1 + 1' } satisfies CodeModeExecInput },
    clientTool: {
      summary: 'A cell calling a client tool',
      value: { title: 'open a ticket', code: 'return await create_ticket({ title: "Disk full" })' } satisfies CodeModeExecInput,
    },
  },
  WaitInput: { wait: { summary: 'Resume a parked run', value: { runId: RUN_ID } satisfies WaitInput } },
  ToolResultsInput: {
    answer: {
      summary: 'Answer a pending client tool call',
      value: { results: [{ id: 'bridge:callValue:1', ok: true, value: { ticket: 42 } }] },
    },
  },
  ClientToolsPut: { tools: { summary: 'One platform-answered client tool', value: { tools: [clientTool] } } },
  ShellExecInput: { echo: { summary: 'A short command', value: { command: 'echo hello', yieldMs: 2000 } satisfies ShellExecInput } },
  ProcessInput: {
    poll: {
      summary: 'Poll a background command',
      value: { action: 'poll', sessionId: 'warm-otter', timeout: 5000 } satisfies ProcessInput,
    },
  },
  CodeModeResult: {
    completed: { summary: 'The cell completed', value: completed },
    waiting: { summary: 'Parked on a client tool call; answer it, then wait', value: waiting },
    failed: { summary: 'Refused input (still HTTP 200)', value: failedInput },
    aborted: { summary: 'Aborted by DELETE', value: aborted },
  },
  SessionConfig: { config: { summary: 'Clamped configuration', value: sessionConfig } },
  SessionView: { view: { summary: 'Configuration, counts and times', value: sessionView } },
  SessionDeleted: {
    deleted: { summary: 'Deleted after aborting its parked run', value: { sessionId: 'chat-1', deleted: true, abortedRuns: [RUN_ID] } },
  },
  RunView: { parked: { summary: 'A run parked on a client tool', value: runView } },
  ToolsView: { catalog: { summary: 'Catalog metadata and exec description', value: toolsView } },
  Event: { event: { summary: 'One event', value: eventPage.events[0] } },
  EventPage: { page: { summary: 'A page of events', value: eventPage } },
  Transcript: { transcript: { summary: 'One exec and its result', value: transcript } },
  StoreView: { values: { summary: 'Committed store', value: { values: { counter: 3, last: { ok: true } } } } },
  ToolResultsAccepted: { accepted: { summary: 'Recorded by the owning worker', value: { accepted: 1 } } },
  ShellAnswer: {
    finished: { summary: 'Finished in the foreground', value: shellFinished },
    running: { summary: 'Still running after yieldMs', value: shellRunning },
    polled: { summary: 'process poll of a running session', value: processPolled },
    failed: { summary: 'Tool-level error (still HTTP 200)', value: processFailed },
  },
  ApiErrorBody: {
    invalidInput: {
      summary: '400',
      value: error({ error: INVALID_SESSION_ID_MESSAGE, code: 'invalid_input', details: { field: 'sessionId' } }),
    },
    unauthorized: {
      summary: '401',
      value: error({ error: 'missing or unknown API key; send Authorization: Bearer <key>.', code: 'unauthorized' }),
    },
    forbidden: {
      summary: '403',
      value: error({ error: 'this API key has the agent role; an operator key is needed to decide approvals.', code: 'forbidden' }),
    },
    notFound: { summary: '404', value: error({ error: 'session s1 not found.', code: 'not_found' }) },
    conflict: { summary: '409', value: error({ error: 'run has already ended.', code: 'conflict', details: { status: 'completed' } }) },
    payloadTooLarge: { summary: '413', value: error({ error: 'request body exceeds 1 MiB.', code: 'invalid_input' }) },
    tenantLimit: {
      summary: '429',
      value: error({
        error: 'tenant in-flight exec/wait quota reached (32 at once); retry once a call has finished.',
        code: 'tenant_limit',
        details: { limit: 'inflight' },
      }),
    },
    unavailable: {
      summary: '503',
      value: error({ error: 'the session store is unavailable; retry in a few seconds.', code: 'runtime_unavailable' }),
    },
  },
  HealthLive: { ok: { summary: 'Process answers', value: { status: 'ok' } } },
  HealthReady: { ok: { summary: 'Redis answers; two workers live', value: { status: 'ok', redis: 'ok', workersLive: 2 } } },
  ...POLICY_EXAMPLES,
  ...NODE_EXAMPLES,
  ...SKILLS_EXAMPLES,
  ...TENANT_TOOLS_EXAMPLES,
  ...CONSOLE_EXAMPLES,
};

/** One error example by HTTP status, for the shared error responses. */
export const ERROR_EXAMPLE_BY_STATUS: Record<number, string> = {
  400: 'invalidInput',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'notFound',
  409: 'conflict',
  413: 'payloadTooLarge',
  429: 'tenantLimit',
  503: 'unavailable',
};

/** `GET …/events` with `Accept: text/event-stream`: what the stream looks like on the wire. */
export const SSE_EXAMPLE = [
  ': streaming session events',
  '',
  `id: 1736935200000-0`,
  'event: run.requested',
  `data: ${JSON.stringify(eventPage.events[0])}`,
  '',
  ': ping',
  '',
].join('\n');

/** `GET /metrics`: a few lines of the Prometheus text format. */
export const METRICS_EXAMPLE = [
  '# HELP codemode_build_info Build of the running process.',
  '# TYPE codemode_build_info gauge',
  'codemode_build_info{version="0.1.0"} 1',
  '',
].join('\n');
