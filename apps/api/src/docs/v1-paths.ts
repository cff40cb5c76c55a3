import { codeModeTools, TOOL_DEFINITION_FORMATS, toolDefinitions } from '@codemode/contracts';
import { SSE_EXAMPLE } from './openapi-examples';
import { body, errors, json, ok, param, type PathItem } from './openapi-builders';

const SESSION = '/v1/sessions/{sid}';
const RUN = `${SESSION}/runs/{runId}`;
const CODE_MODE_200 =
  'A `CodeModeResult`, HTTP 200 even when the cell failed: a bad body is a `failed` result with `code:"invalid_input"` and `failurePhase:"input"`, ' +
  'and Redis being unreachable is `code:"runtime_unavailable"` (the model reads the answer).';

/** Every route under `/v1` (SPEC §2), by path. Controllers: sessions, runs, tools, events, shell. */
export function v1Paths(): Record<string, PathItem> {
  return {
    '/v1/sessions': {
      get: {
        operationId: 'listSessions',
        tags: ['sessions'],
        summary: "List the tenant's sessions",
        description:
          "The caller's tenant's sessions, newest activity (last write) first, each with its running (requested or running) and parked runs among its 20 newest. " +
          "Pass `next` as `cursor` for the next page; `next` is null on the last page. Never lists another tenant's sessions.",
        parameters: [param('ListLimit'), param('ListCursor')],
        responses: { '200': ok('A page of sessions.', 'SessionList'), ...errors(400, 401, 503) },
      },
    },
    [SESSION]: {
      parameters: [param('SessionId')],
      put: {
        operationId: 'putSession',
        tags: ['sessions'],
        summary: 'Create or configure a session',
        description:
          'Merges `{agentId?, codeMode?, shell?, policy?, agents?, repairAttempts?, notifyUrl?}` into the stored configuration (omitted fields keep their values, `notifyUrl: null` clears it). Limits are clamped (SPEC §8). ' +
          "`agents: true` installs `agents` in the session's cells (SPEC §15; default false). " +
          '`notifyUrl` (SPEC §7) hears of every background shell session that ends, signed as client tool webhooks are; it passes their address rules (SPEC §10), or the PUT is a 400 naming `notifyUrl`.',
        requestBody: body('SessionPutInput'),
        responses: { '200': ok('The session configuration with clamped values.', 'SessionConfig'), ...errors(400, 401, 413, 503) },
      },
      get: {
        operationId: 'getSession',
        tags: ['sessions'],
        summary: 'Read a session',
        responses: { '200': ok('Configuration, counts, created/updated times.', 'SessionView'), ...errors(400, 401, 404, 503) },
      },
      delete: {
        operationId: 'deleteSession',
        tags: ['sessions'],
        summary: 'Delete a session and everything of it',
        description:
          'Aborts the live runs of the session first (as `DELETE …/runs/{runId}`), then removes its events, transcript, store, tools, skills, policy, approvals, runs, parked images and results from Redis, ' +
          "giving their bytes back to the tenant's `CODEMODE_TENANT_MAX_STORED_BYTES` (SPEC §10). 404 for an unknown session, also another tenant's.",
        responses: {
          '200': ok('The session is gone; `abortedRuns` names the runs that were aborted first.', 'SessionDeleted'),
          ...errors(400, 401, 404, 409, 503),
        },
      },
    },
    [`${SESSION}/exec`]: {
      parameters: [param('SessionId')],
      post: {
        operationId: 'exec',
        tags: ['runs'],
        summary: 'Run a JavaScript cell',
        description:
          'Runs `code` (or its alias `command`) as the body of an async function in a fresh QuickJS VM. ' +
          'With `Idempotency-Key` (tenant + session scope, kept 24 h) a repeated key returns the first answer instead of running the cell twice.',
        parameters: [param('IdempotencyKey')],
        requestBody: body('CodeModeExecInput'),
        responses: { '200': ok(CODE_MODE_200, 'CodeModeResult', ['completed', 'waiting', 'failed']), ...errors(401) },
      },
    },
    [`${SESSION}/wait`]: {
      parameters: [param('SessionId')],
      post: {
        operationId: 'wait',
        tags: ['runs'],
        summary: 'Resume a parked run',
        description:
          '`{runId}` (`run_id` accepted). An unknown, expired or ended run is `failed` with `code mode run is unavailable or expired.` ' +
          '(for an ended run, followed by where to read its outcome). With `Idempotency-Key` (tenant + session scope, kept 24 h, apart from ' +
          "exec's keys) a repeated key returns the first wait's answer, also when the first call's connection died with its API.",
        parameters: [param('IdempotencyKey')],
        requestBody: body('WaitInput'),
        responses: { '200': ok(CODE_MODE_200, 'CodeModeResult', ['completed', 'waiting', 'failed']), ...errors(401) },
      },
    },
    [`${SESSION}/runs`]: {
      parameters: [param('SessionId')],
      get: {
        operationId: 'listRuns',
        tags: ['runs'],
        summary: "List a session's runs",
        description:
          'Newest request first, each with title, status, times, owner worker and whether its last result was replay-safe (no result: see `GET …/runs/{runId}`). ' +
          'Runs past retention are gone from the list.',
        parameters: [param('ListLimit'), param('ListCursor')],
        responses: { '200': ok('A page of runs.', 'RunList'), ...errors(400, 401, 404, 503) },
      },
    },
    [RUN]: {
      parameters: [param('SessionId'), param('RunId')],
      get: {
        operationId: 'getRun',
        tags: ['runs'],
        summary: 'Read a run',
        responses: {
          '200': ok('Run projection: status, title, owner worker, timestamps, last result.', 'RunView'),
          ...errors(400, 401, 404, 503),
        },
      },
      delete: {
        operationId: 'abortRun',
        tags: ['runs'],
        summary: 'Abort a parked run',
        description:
          'Pending calls are cancelled, the slot freed, nothing committed. 409 if the run had already ended (the details carry its result).',
        responses: {
          '200': ok('The run\'s final result: `failed`, `code:"aborted"`.', 'CodeModeResult', ['aborted']),
          ...errors(400, 401, 404, 409, 503),
        },
      },
    },
    [`${RUN}/tool-results`]: {
      parameters: [param('SessionId'), param('RunId')],
      post: {
        operationId: 'submitToolResults',
        tags: ['runs'],
        summary: 'Answer pending client tool calls',
        description: "Answers some of the `pendingToolCalls` of the run's last `waiting` result; a later `wait` sees them.",
        requestBody: body('ToolResultsInput'),
        responses: { '202': ok('Recorded by the worker holding the run.', 'ToolResultsAccepted'), ...errors(400, 401, 413, 404, 409, 503) },
      },
    },
    [`${SESSION}/tools`]: {
      parameters: [param('SessionId')],
      put: {
        operationId: 'putTools',
        tags: ['tools'],
        summary: "Replace the session's client tools",
        description:
          'Tools with an `endpoint` are called by the worker; without one their calls come back as `pendingToolCalls`. Names are unique.',
        requestBody: body('ClientToolsPut'),
        responses: { '200': ok("The session's catalog metadata.", 'ToolsView'), ...errors(400, 401, 413, 503) },
      },
      get: {
        operationId: 'getTools',
        tags: ['tools'],
        summary: 'Read the tool catalog',
        responses: { '200': ok('Catalog metadata and the model-visible exec description.', 'ToolsView'), ...errors(400, 401, 503) },
      },
    },
    [`${SESSION}/tools/definitions`]: {
      parameters: [param('SessionId')],
      get: {
        operationId: 'getToolDefinitions',
        tags: ['tools'],
        summary: 'exec and wait as a model API takes them',
        description:
          'The two Code Mode tools with the session exec description, as OpenAI function tools (`openai`: Chat Completions; ' +
          '`openai-responses`: the Responses API, `strict: false`), Anthropic `tools` ' +
          '(`anthropic`) or MCP `Tool`s (`mcp`). A session never written gets the defaults; nothing is created.',
        parameters: [{ name: 'format', in: 'query', required: true, schema: { type: 'string', enum: [...TOOL_DEFINITION_FORMATS] } }],
        responses: {
          '200': {
            description: '`{tools: [...]}` in the chosen form.',
            content: {
              'application/json': {
                schema: { type: 'object', required: ['tools'], properties: { tools: { type: 'array', items: { type: 'object' } } } },
                example: { tools: toolDefinitions('anthropic', codeModeTools('Run JavaScript in a fresh sandbox. …')) },
              },
            },
          },
          ...errors(400, 401, 503),
        },
      },
    },
    [`${SESSION}/events`]: {
      parameters: [param('SessionId')],
      get: {
        operationId: 'listEvents',
        tags: ['events'],
        summary: 'Read the event log, or stream it live',
        description:
          'A page of `{events, next}`. With `Accept: text/event-stream` the answer is a Server-Sent Events stream: ' +
          'the log from `after` (or `Last-Event-ID`, or the start), then live events; `: ping` comments every 15 s.',
        parameters: [param('After'), param('Limit'), param('LastEventId')],
        responses: {
          '200': {
            description: 'A page of events (JSON) or the live stream (SSE).',
            content: {
              ...json('EventPage'),
              'text/event-stream': { schema: { type: 'string' }, example: SSE_EXAMPLE },
            },
          },
          ...errors(400, 401, 404, 503),
        },
      },
    },
    [`${SESSION}/transcript`]: {
      parameters: [param('SessionId')],
      get: {
        operationId: 'getTranscript',
        tags: ['sessions'],
        summary: 'Read the transcript',
        responses: { '200': ok('exec/wait inputs and results in order.', 'Transcript'), ...errors(400, 401, 404, 503) },
      },
    },
    [`${SESSION}/store`]: {
      parameters: [param('SessionId')],
      get: {
        operationId: 'getStore',
        tags: ['sessions'],
        summary: 'Read the committed session store',
        responses: { '200': ok('`store(key, value)` writes of completed cells.', 'StoreView'), ...errors(400, 401, 404, 503) },
      },
    },
    '/v1/fleet': {
      get: {
        operationId: 'getFleet',
        tags: ['operations'],
        summary: 'Workers, their capacity, and your live runs per worker',
        description:
          "Live workers (lease age, start time, threads and slots as each reports it) and the caller's own requested, running and parked runs " +
          "placed on the worker holding each (or in `unheld`). Other tenants' runs are never listed. Occupancy (busy threads, parked runs, the shared " +
          'cell queue) only in single-tenant mode: in multi-tenant mode it would tell of other tenants, and `queue` is null. For the operator console.',
        responses: { '200': ok('The fleet as this tenant may see it.', 'FleetView'), ...errors(401, 503) },
      },
    },
    [`${SESSION}/shell/exec`]: {
      parameters: [param('SessionId')],
      post: {
        operationId: 'shellExec',
        tags: ['shell'],
        summary: 'Run a shell command',
        description:
          'Backgrounded after `yieldMs`. Tool-level errors are HTTP 200 with `details.status:"failed"` and the error in `text` (SPEC §7).',
        requestBody: body('ShellExecInput'),
        responses: { '200': ok('`{text, details}`.', 'ShellAnswer', ['finished', 'running', 'failed']), ...errors(400, 401, 413, 503) },
      },
    },
    [`${SESSION}/process`]: {
      parameters: [param('SessionId')],
      post: {
        operationId: 'process',
        tags: ['shell'],
        summary: 'Act on a shell process session',
        description:
          '`action`: list, poll, log, write, send-keys, submit, paste, kill, clear, remove. Tool-level errors are HTTP 200 (SPEC §7).',
        requestBody: body('ProcessInput'),
        responses: { '200': ok('`{text, details}`.', 'ShellAnswer', ['polled', 'failed']), ...errors(400, 401, 413, 503) },
      },
    },
  };
}
