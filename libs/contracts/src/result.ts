import { z } from 'zod';
import { RepairSchema } from './repair';

export const CODE_MODE_ERROR_CODES = [
  'invalid_input',
  'runtime_unavailable',
  'aborted',
  'timeout',
  'output_limit_exceeded',
  'snapshot_limit_exceeded',
  'internal_error',
] as const;
export const CodeModeErrorCodeSchema = z.enum(CODE_MODE_ERROR_CODES);
export type CodeModeErrorCode = z.infer<typeof CodeModeErrorCodeSchema>;

export const FailurePhaseSchema = z.enum(['input', 'guest', 'bridge', 'host']);
export type FailurePhase = z.infer<typeof FailurePhaseSchema>;

export const CodeModeOutputSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('json'), value: z.unknown() }),
]);
export type CodeModeOutput = z.infer<typeof CodeModeOutputSchema>;

/** Bridge methods a guest can ask the host for (SPEC §3 PendingToolCall). */
export const BRIDGE_METHODS = [
  'callValue',
  'namespace',
  'search',
  'describe',
  'yield',
  'sleep',
  'resultSave',
  'resultLoad',
  'resultDelete',
  'store',
  'load',
  'api',
] as const;
export const BridgeMethodSchema = z.enum(BRIDGE_METHODS);
export type BridgeMethod = z.infer<typeof BridgeMethodSchema>;

export const PendingToolCallSchema = z.object({
  id: z.string().regex(/^bridge:[A-Za-z]+:[1-9][0-9]*$/),
  method: BridgeMethodSchema,
  tool: z.string().optional(),
  input: z.unknown().optional(),
});
export type PendingToolCall = z.infer<typeof PendingToolCallSchema>;

export const TelemetrySchema = z.object({
  catalogSize: z.number().int(),
  sources: z.object({ openclaw: z.number().int(), mcp: z.number().int(), client: z.number().int() }),
  searchCount: z.number().int(),
  describeCount: z.number().int(),
  callCount: z.number().int(),
  counterScope: z.string(),
  visibleTools: z.tuple([z.literal('exec'), z.literal('wait')]),
});
export type Telemetry = z.infer<typeof TelemetrySchema>;

const common = {
  output: z.array(CodeModeOutputSchema).optional(),
  replaySafe: z.boolean(),
  telemetry: TelemetrySchema,
};

export const CompletedResultSchema = z.object({
  status: z.literal('completed'),
  value: z.unknown(),
  warnings: z.array(z.string()).optional(),
  ...common,
});
export const WaitingResultSchema = z.object({
  status: z.literal('waiting'),
  runId: z.string(),
  reason: z.enum(['pending_tools', 'yield']),
  pendingToolCalls: z.array(PendingToolCallSchema).optional(),
  ...common,
});
export const FailedResultSchema = z.object({
  status: z.literal('failed'),
  error: z.string(),
  code: CodeModeErrorCodeSchema.optional(),
  failurePhase: FailurePhaseSchema,
  bridgeDispatchStarted: z.boolean(),
  /** SPEC §16: on failures of exec, or of a wait that ended the run, that count as a failed cell. */
  repair: RepairSchema.optional(),
  ...common,
});

/** What `exec` and `wait` answer, always with HTTP 200. */
export const CodeModeResultSchema = z.discriminatedUnion('status', [CompletedResultSchema, WaitingResultSchema, FailedResultSchema]);
export type CodeModeResult = z.infer<typeof CodeModeResultSchema>;
export type CompletedResult = z.infer<typeof CompletedResultSchema>;
export type WaitingResult = z.infer<typeof WaitingResultSchema>;
export type FailedResult = z.infer<typeof FailedResultSchema>;
