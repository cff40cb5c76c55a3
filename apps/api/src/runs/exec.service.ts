import { Inject, Injectable } from '@nestjs/common';
import {
  type CellJob,
  type CellSpec,
  INVALID_SESSION_ID_MESSAGE,
  SESSION_ID_PATTERN,
  type CodeModeResult,
  type Limits,
  type SessionRef,
  type ValidExecInput,
} from '@codemode/contracts';
import { effectiveLimits, effectiveShellConfig, type AppConfig } from '@codemode/config';
import {
  ErrorGate,
  isStoreUnavailable,
  mayHaveRun,
  retryWhileStoreUnavailable,
  RunIds,
  RunLedger,
  RunEnds,
  RunReplies,
  SessionLedger,
  type CellEntryRef,
  type SessionSettingsAt,
  redisFailureLog,
} from '@codemode/events';
import { emptyTelemetry, failedInputResult, hostFailureResult, NOT_STARTED_MESSAGE } from '@codemode/cells';
import { requestIdField, type Logger } from '@codemode/telemetry';
import { CellDispatch } from '../queues/cell-dispatch';
import { BodyThreads } from '../bodies/body-threads';
import { bodyRefusalError, type ParsedBody } from '../http/request-context';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { IDEMPOTENCY_KEY_PATTERN, IDEMPOTENT_PENDING_ERROR, IDEMPOTENT_POLL_MS, INVALID_IDEMPOTENCY_KEY_ERROR } from './host-results';
import { CallAnswers } from './answers/call-answers';
import { atReach, reaching, storeFailureAnswer, storeFailureOf } from './answers/store-failure-answers';
import { storedAnswer } from './answers/stored-answers';
import type { ReplyDeadline } from './answers/reply-deadline';
import { checkExecBody, type ExecBody } from './exec-body';
import { requestEntryFate } from './request-entry-fate';
import { SessionSettingsCache } from './session-settings-cache';

/**
 * Told once an exec is recorded, before its answer (SPEC §14 Tasks: an MCP task answers from
 * then on): its run (the first run's, for a repeated Idempotency-Key), or the event of its refusal.
 */
export type ExecRecorded = (record: { runId: string; awaitResults: boolean } | { rejectedEventId: string }) => void;

/** One exec call, as its steps after the checks know it. */
interface ExecCall {
  ref: SessionRef;
  input: ValidExecInput;
  idempotencyKey: string | undefined;
  /** The tenant's calls in flight, this one included (queue fairness, see CellDispatch.add). */
  rank: number;
  recorded: ExecRecorded | undefined;
}

/** Where a new cell's stream entry landed, once its reply is read (null before, on `bullmq`, or when it failed). */
interface Dispatched {
  entry: CellEntryRef | null;
}

/** How long the API keeps trying to close a run it could not queue while Redis is away. */
const CLOSE_UNQUEUED_MS = 10 * 60_000;

/** This exec abandons its own run: it answers its caller itself, so nothing is published to it. */
const BY_ITS_CALLER = { byItsCaller: true } as const;

/**
 * The exec path (SPEC §2–§3): validate, record `run.requested`, enqueue, and answer with the
 * result the worker pushes back once its terminal event is in the log.
 */
@Injectable()
export class ExecService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runs: RunLedger,
    private readonly runIds: RunIds,
    private readonly sessions: SessionLedger,
    private readonly replies: RunReplies,
    private readonly cells: CellDispatch,
    private readonly ends: RunEnds,
    private readonly answers: CallAnswers,
    private readonly bodies: BodyThreads,
  ) {}

  private readonly settingsCache = new SessionSettingsCache();
  private readonly notStartedLog = new ErrorGate(1_000);

  /** `rank`: the tenant's calls in flight, this one included (queue fairness, see CellDispatch.add). */
  async exec(
    tenant: string,
    sessionId: string,
    body: ParsedBody,
    idempotencyKey: string | undefined,
    rank = 1,
    recorded?: ExecRecorded,
  ): Promise<CodeModeResult> {
    if (!SESSION_ID_PATTERN.test(sessionId)) {
      return failedInputResult(INVALID_SESSION_ID_MESSAGE, emptyTelemetry(), false);
    }
    const ref: SessionRef = { tenant, sessionId };
    const read = await this.read(tenant, body);
    if (read.kind !== 'checked') {
      return this.reject(ref, { body: read.kind }, failedInputResult(bodyRefusalError(read), emptyTelemetry(), false), recorded);
    }
    const { check, replaySafe, summary } = read;
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey)) {
      return this.reject(ref, summary, failedInputResult(INVALID_IDEMPOTENCY_KEY_ERROR, emptyTelemetry(), replaySafe), recorded);
    }
    if (!check.ok) {
      return this.reject(ref, summary, failedInputResult(check.error, emptyTelemetry(), replaySafe), recorded);
    }
    try {
      return await this.run(ref, check.input, idempotencyKey, rank, recorded);
    } catch (error) {
      // SPEC §17: "store is full/unavailable" only when nothing of the call ran (storeFailureAnswer).
      const failed = storeFailureOf(error, check.input.restartSafe);
      if (!failed) throw error;
      const admitted = redisFailureLog.admit(failed.cause);
      if (admitted) this.logger.warn({ tenant, sessionId, err: failed.cause, ...admitted }, 'exec answered: Redis unavailable or full');
      return failed.answer;
    }
  }

  /**
   * SPEC §10 "Event loops": a large body is parsed and its code checked on a body thread; so is the
   * code of an exec that came parsed from a large body (an MCP message: SPEC §14).
   */
  private async read(
    tenant: string,
    body: ParsedBody,
  ): Promise<Exclude<ParsedBody, { kind: 'json' | 'large' }> | ({ kind: 'checked' } & ExecBody)> {
    // A body that kills its thread (out of memory) is not one this API can read.
    const unreadable = () => ({ kind: 'invalid_json' }) as const;
    if (body.kind === 'json' && body.large) return this.bodies.run(tenant, { kind: 'exec-value', value: body.value }).catch(unreadable);
    if (body.kind === 'json') return { kind: 'checked', ...checkExecBody(body.value) };
    if (body.kind !== 'large') return body;
    return this.bodies.run(tenant, { kind: 'exec', bytes: body.bytes }).catch(unreadable);
  }

  private async run(
    ref: SessionRef,
    input: ValidExecInput,
    idempotencyKey: string | undefined,
    rank: number,
    recorded: ExecRecorded | undefined,
  ): Promise<CodeModeResult> {
    const runId = await this.runIds.mint(ref);
    // The settings this process last read for the session: request-run refuses them if the
    // session was configured since. Then read again; a configuration racing this exec may land on
    // either side of it, so the second request is not checked.
    const at = this.settingsCache.get(ref) ?? (await this.readSettings(ref));
    // The cell's whole spec under those settings: recorded in run.requested and carried by its job.
    const spec = this.specOf(ref, input, at);
    const call: ExecCall = { ref, input, idempotencyKey, rank, recorded };
    return this.cells.onStream
      ? this.requestWithEntry(call, runId, spec, at.version)
      : this.requestThenQueue(call, runId, spec, at.version);
  }

  /** `CODEMODE_CELL_DISPATCH=bullmq`: the cell's job is queued once its request is recorded. */
  private async requestThenQueue(call: ExecCall, runId: string, first: CellSpec, version: string): Promise<CodeModeResult> {
    const { ref, input, idempotencyKey, recorded } = call;
    const log = this.logger.child({ tenant: ref.tenant, sessionId: ref.sessionId, runId });
    let spec = first;
    // Indexed before it is requested (in the same socket write): a worker's sweep ends it if nobody else does.
    this.answers.markLive(ref, runId, answerBudgetMs(spec));
    let requested: Awaited<ReturnType<ExecService['request']>>;
    try {
      requested = await this.request(ref, runId, spec, idempotencyKey, version);
      if ('settingsChanged' in requested) {
        spec = this.specOf(ref, input, await this.readSettings(ref));
        requested = await this.request(ref, runId, spec, idempotencyKey, '');
      }
    } catch (error) {
      // A request whose reply was lost (Redis restarting, a timeout) may still have been recorded:
      // closed with the answer this exec gets, once Redis answers, it never dangles as `requested`.
      if (isStoreUnavailable(error) && mayHaveRun(error)) {
        void this.closeUnqueued(ref, runId, storeFailureAnswer(error, 'nothing-run', input.restartSafe), idempotencyKey, log);
      }
      throw error;
    }
    if ('settingsChanged' in requested) throw new Error('request-run refused an unchecked request');
    recorded?.({ runId: requested.created ? runId : requested.runId, awaitResults: input.awaitResults });
    // The first call with the key may have run its cell: a read failing now reports no outcome.
    if (!requested.created) {
      const existing = requested.runId;
      return reaching('sent', () => this.awaitExisting(ref, existing, spec.limits, input.restartSafe));
    }
    const deadline = this.follow(call, runId, spec, log);
    try {
      await this.cells.add(this.jobOf(ref, runId, spec), call.rank);
    } catch (error) {
      this.abandonUnqueued(call, runId, error, deadline, log);
    }
    // Queued: from here on its outcome may exist even if Redis fails this call.
    return reaching('sent', () => deadline.outcome);
  }

  /**
   * `CODEMODE_CELL_DISPATCH=stream` (SPEC §13): the cell's entry is sent in the socket write of its
   * request (request first; a worker that finds no run for an entry claims again three times:
   * absentRunRetryMs), its answer listened for before either leaves (a worker may answer
   * before the request's reply is back). What each pair of replies leads to: requestEntryFate.
   */
  private async requestWithEntry(call: ExecCall, runId: string, spec: CellSpec, version: string): Promise<CodeModeResult> {
    const { ref, input, idempotencyKey, recorded } = call;
    const log = this.logger.child({ tenant: ref.tenant, sessionId: ref.sessionId, runId });
    this.answers.markLive(ref, runId, answerBudgetMs(spec));
    const dispatched: Dispatched = { entry: null };
    const deadline = this.follow(call, runId, spec, log, dispatched);
    const sent = await Promise.allSettled([
      this.request(ref, runId, spec, idempotencyKey, version),
      this.cells.add(this.jobOf(ref, runId, spec), call.rank),
    ]);
    const fate = requestEntryFate(...sent);
    if (fate.kind !== 'follow' && fate.kind !== 'abandon') deadline.drop();
    if (sent[1].status === 'fulfilled') dispatched.entry = sent[1].value;
    if ((fate.kind === 'existing' || fate.kind === 'resend') && dispatched.entry) void this.cells.remove(ref, runId, dispatched.entry);
    if (fate.kind === 'fail') throw fate.error;
    if (fate.kind === 'close') {
      const result = storeFailureAnswer(fate.error, 'nothing-run', input.restartSafe);
      void this.closeUnqueued(ref, runId, result, idempotencyKey, log);
      throw fate.error;
    }
    if (fate.kind === 'resend') {
      if (version === '') throw new Error('request-run refused an unchecked request');
      const again = this.specOf(ref, input, await this.readSettings(ref));
      return this.requestWithEntry(call, await this.runIds.mint(ref), again, '');
    }
    if (fate.kind === 'existing') {
      recorded?.({ runId: fate.runId, awaitResults: input.awaitResults });
      return reaching('sent', () => this.awaitExisting(ref, fate.runId, spec.limits, input.restartSafe));
    }
    if (fate.kind === 'follow' || fate.requested) recorded?.({ runId, awaitResults: input.awaitResults });
    if (fate.kind === 'abandon') this.abandonUnqueued(call, runId, fate.error, deadline, log);
    return reaching('sent', () => deadline.outcome);
  }

  /** Listens for the exec's pushed answer under its deadlines; before its cell can be read, so no answer is missed. */
  /** `dispatched`: where the cell's stream entry is once known, so a cell abandoned as not started is taken back. */
  private follow(call: ExecCall, runId: string, spec: CellSpec, log: Logger, dispatched: Dispatched = { entry: null }): ReplyDeadline {
    const { ref, input, idempotencyKey } = call;
    const leg = { ref, runId, call: 'exec', restartSafe: input.restartSafe, awaitResults: input.awaitResults, log } as const;
    return this.answers.follow(
      leg,
      { startMs: spec.limits.timeoutMs, answerMs: answerBudgetMs(spec) },
      {
        onStartOverdue: async () => {
          const result = hostFailureResult(NOT_STARTED_MESSAGE, 'runtime_unavailable', input.restartSafe);
          const outcome = await this.ends.abandon(ref, runId, result, idempotencyKey, BY_ITS_CALLER);
          // Started, or ended or parked with no answer pushed here (an abort's push lost, or its
          // channel not kept): the answer it recorded now, rather than after its answer budget.
          if (!outcome.abandoned) return this.answers.answerOf(leg, await this.runs.get(ref, runId).catch(() => null)) ?? null;
          // A stalled fleet abandons many cells at once: one line a second, with how many it stands for.
          const admitted = this.notStartedLog.admit(NOT_STARTED_LINE);
          if (admitted) log.warn(admitted, NOT_STARTED_LINE);
          await this.cells.remove(ref, runId, dispatched.entry);
          return result;
        },
        // The pushed answer can be missed (pub/sub reconnecting): the run's own answer wins,
        // including `waiting` — it carries the runId the caller needs to wait on.
        onNoAnswer: () => this.answers.unanswered(leg),
      },
    );
  }

  /**
   * The run is recorded but maybe not queued: close it so it cannot dangle as `requested`. The
   * dispatch may also have landed with only its reply lost (Redis restarting): then a worker that
   * started the cell keeps it, abandoning declines, and the run's own answer comes as for any
   * exec (never "nothing was run" for a cell that runs). Redis still away: answer now (the cell
   * may be queued if the dispatch may have reached Redis) and keep trying to close it.
   */
  private abandonUnqueued(call: ExecCall, runId: string, error: unknown, deadline: ReplyDeadline, log: Logger): void {
    const result = storeFailureAnswer(error, 'nothing-run', call.input.restartSafe);
    this.ends.abandon(call.ref, runId, result, call.idempotencyKey, BY_ITS_CALLER).then(
      (outcome) => {
        if (outcome.abandoned || outcome.status === null) deadline.reject(atReach(error, 'nothing-run'));
      },
      () => {
        deadline.reject(atReach(error, 'sending'));
        void this.closeUnqueued(call.ref, runId, result, call.idempotencyKey, log);
      },
    );
  }

  /** The job that carries the cell to a worker (a BullMQ job or a stream entry). */
  private jobOf(ref: SessionRef, runId: string, spec: CellSpec): CellJob {
    const replyTo = this.replies.channelFor(ref);
    return { tenant: ref.tenant, sessionId: ref.sessionId, runId, spec, replyTo, requestedAt: Date.now(), ...requestIdField() };
  }

  private async readSettings(ref: SessionRef): Promise<SessionSettingsAt> {
    const at = await this.sessions.settings(ref);
    this.settingsCache.set(ref, at);
    return at;
  }

  /** The whole spec of the cell, as the session's settings `at` give it. */
  private specOf(ref: SessionRef, input: ValidExecInput, at: SessionSettingsAt): CellSpec {
    const stored = at.settings;
    const limits = effectiveLimits(this.config, ref.tenant, stored?.codeMode);
    const shell = effectiveShellConfig(this.config, stored?.shell);
    return { ...input, limits, shell, agentId: stored?.agentId ?? null, agents: stored?.agents ?? false };
  }

  /**
   * Records `run.requested` with the cell's whole spec (checked against the settings `version` it
   * was computed from, unless ''): the log is the one source of a run's spec for whoever recovers it.
   */
  private request(
    ref: SessionRef,
    runId: string,
    spec: CellSpec,
    idempotencyKey: string | undefined,
    version: string,
  ): ReturnType<RunLedger['request']> {
    const data = { ...spec, ...(idempotencyKey === undefined ? {} : { idempotencyKey }), ...requestIdField() };
    return this.runs.request(ref, runId, data, { idempotencyKey, settingsVersion: version, replyTo: this.replies.channelFor(ref) });
  }

  private async closeUnqueued(
    ref: SessionRef,
    runId: string,
    result: CodeModeResult,
    idempotencyKey: string | undefined,
    log: Logger,
  ): Promise<void> {
    try {
      await retryWhileStoreUnavailable(() => this.ends.abandon(ref, runId, result, idempotencyKey, BY_ITS_CALLER), {
        giveUpMs: CLOSE_UNQUEUED_MS,
      });
    } catch (error) {
      log.error({ err: error }, 'could not close a run that was never queued; it stays requested');
    }
  }

  /** A repeated Idempotency-Key: answer with the first run's result, waiting while it runs. */
  private async awaitExisting(ref: SessionRef, runId: string, limits: Limits, replaySafe: boolean): Promise<CodeModeResult> {
    const until = Date.now() + limits.timeoutMs * 2 + this.config.replyGraceMs;
    for (;;) {
      // The first answer is the run's stored one once it ended or parked.
      const first = storedAnswer(await this.runs.get(ref, runId));
      if (first) return first;
      if (Date.now() >= until) return hostFailureResult(IDEMPOTENT_PENDING_ERROR, 'runtime_unavailable', replaySafe);
      await new Promise((resolve) => setTimeout(resolve, IDEMPOTENT_POLL_MS));
    }
  }

  /** Refused input is still part of the conversation: record it, but answer even if Redis is down. */
  private async reject(ref: SessionRef, input: unknown, result: CodeModeResult, recorded?: ExecRecorded): Promise<CodeModeResult> {
    try {
      const rejected = await this.runs.rejectRecorded(ref, 'exec', input, result);
      recorded?.({ rejectedEventId: rejected.eventId });
      return rejected.result;
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
    }
    return result;
  }
}

const NOT_STARTED_LINE = 'no worker started the cell within its budget';

/** How long an exec's leg may take to answer once started: its budget, or the snapshot TTL when it awaits its tool results (SPEC §3). */
function answerBudgetMs(spec: CellSpec): number {
  return spec.awaitResults ? spec.limits.snapshotTtlSeconds * 1000 : spec.limits.timeoutMs;
}
