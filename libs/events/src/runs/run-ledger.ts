import type { CodeModeResult, RunRecoverySeed, RunStatus, RunView, SessionRef, TranscriptEntry, WaitingResult } from '@codemode/contracts';
import type { RunRequestedDataSchema } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import type { z } from 'zod';
import { EventLog, type AppendInput } from '../log/event-log';
import { encodeRunRequested } from '../log/event-encoding';
import { packEventData, splicedEventData } from '../log/event-packing';
import type { KeySpace } from '../platform/keys';
import { checkReply, LUA_CODES, toRunStatus } from '../platform/lua-errors';
import { RunNotStartedError } from '../platform/errors';
import { readRun } from './run-read';
import { guard } from '../platform/redis';
import { keptRecordFields, pastField } from './run-record';
import { repairArgs, withRepair } from './repair-args';
import { parkRun, type ParkInput } from './run-parking';
import { answerIdleWait, readIdleWait, type IdleWaitRead } from './idle-wait';
import { reserveResume, type KeyUsed, type Reservation } from './resume-reservation';
import { ScriptLoader } from '../platform/script-loader';
import { SessionIndex } from '../log/session-index';
import { TranscriptReader } from '../log/transcript-reader';

export type RunRequestedData = z.infer<typeof RunRequestedDataSchema>;
export type FinishType = 'run.completed' | 'run.failed';

/** SPEC §2: an exec or wait Idempotency-Key is kept 24 h. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

/**
 * Redis keeps a hash in its small encoding (listpack) only while every value is at most this long
 * (`hash-max-listpack-value`), and never converts it back: a run's `replyTo` past it (a long key
 * prefix) is not kept, or the run's hash would stay ~4× larger for as long as it is retained.
 */
const SMALL_HASH_VALUE_BYTES = 64;

/** Run lifecycle writes and the run and transcript projections. */
export class RunLedger {
  private readonly log: EventLog;
  private readonly index: SessionIndex;
  private readonly transcripts: TranscriptReader;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly scripts = ScriptLoader.default(),
  ) {
    this.log = new EventLog(redis, keys, scripts);
    this.index = new SessionIndex(redis, keys, scripts);
    this.transcripts = new TranscriptReader(redis, keys, this.log);
  }

  /**
   * Creates the session if missing, the run (status `requested`), its transcript input mark and
   * `run.requested`. With an idempotency key (kept 24 h) already used in this session, writes
   * nothing and answers the first request's runId. With `settingsVersion` (the session's
   * `configVersion` its limits were computed from: `SessionLedger.settings`), writes nothing and
   * answers `settingsChanged` when the session was configured since. `runId` is fresh per request:
   * a run already recorded under it is this very request, resent after its reply was lost, and
   * answers created (see `resentRequest`). With `replyTo` (its caller's channel), a run abandoned
   * before it started answers its caller at once (abandon-run.lua).
   */
  async request(
    ref: SessionRef,
    runId: string,
    data: RunRequestedData,
    opts: { idempotencyKey?: string; settingsVersion?: string; replyTo?: string } = {},
  ): Promise<{ created: true } | { created: false; runId: string } | { created: false; settingsChanged: true }> {
    const idempotencyKey = opts.idempotencyKey ?? data.idempotencyKey;
    const { head, raws } = encodeRunRequested(data, idempotencyKey);
    const keys = [...this.keys.scriptKeys(ref, runId), this.keys.idempotency(ref, idempotencyKey ?? '')];
    const args = [
      runId,
      head,
      idempotencyKey ?? '',
      IDEMPOTENCY_TTL_SECONDS,
      opts.settingsVersion ?? '',
      this.packed(() => splicedEventData(head, raws)),
      String(raws.length),
      ...raws.flat(),
      'restartSafe',
      String(data.restartSafe),
      ...(opts.replyTo !== undefined && Buffer.byteLength(opts.replyTo) <= SMALL_HASH_VALUE_BYTES ? ['replyTo', opts.replyTo] : []),
    ];
    const raw = await this.index.alongside(ref, () => guard(() => this.scripts.run(this.redis, 'request-run', keys, args)));
    if (resentRequest(raw, runId)) return { created: true };
    const reply = checkReply(raw, { runId, type: 'run.requested' });
    if (reply[0] === LUA_CODES.settingsChanged) return { created: false, settingsChanged: true };
    return reply[0] === LUA_CODES.ok ? { created: true } : { created: false, runId: String(reply[1]) };
  }

  /**
   * A worker claims the run: only a `requested` run becomes `running` (owner, epoch, startedAt,
   * `run.started`), and the `started` reply is published to `replyTo` in the same script.
   * Anything else answers the current status and writes nothing, so a cell the API abandoned
   * never runs later. With `claimToken`, a retry of a claim whose reply was lost answers started.
   */
  async start(
    ref: SessionRef,
    runId: string,
    opts: { workerId: string; epoch: number; replyTo: string; recovery?: RunRecoverySeed; claimToken?: string },
  ): Promise<{ started: true } | { started: false; status: RunStatus | null }> {
    const args = [
      runId,
      opts.workerId,
      opts.epoch,
      opts.replyTo,
      opts.recovery ? JSON.stringify(opts.recovery) : '',
      opts.claimToken ?? '',
    ];
    const raw = await guard(() => this.scripts.run(this.redis, 'start-run', this.keys.scriptKeys(ref, runId), args));
    const reply = checkReply(raw, { runId, epoch: opts.epoch, type: 'run.started' });
    return reply[0] === LUA_CODES.ok ? { started: true } : { started: false, status: toRunStatus(reply[1]) };
  }

  /**
   * Ends the run with its one terminal event, fenced by epoch: status, endedAt, the result's event
   * and the transcript result mark in the same script, then the `result` reply to `replyTo`.
   * `claimedBy`: the run was never claimed (SPEC §13, a cell that ended before its claim was
   * written): this worker claims it in the same script, `run.started` before the terminal event,
   * only while it is still `requested`. `trailMark`: the end is sent right behind the run's
   * trailed events (`EventLog.appendAll` with that mark) and is written only if they all landed.
   * @throws RunAlreadyEndedError when the run already ended (with `claimedBy`: this worker's own
   * end, written by an attempt whose reply was lost); StaleEpochError; RunNotFoundError;
   * RunNotStartedError (with `claimedBy`) when it is not `requested` any more; TrailNotLandedError
   * (with `trailMark`) when the events it was sent behind did not all land
   */
  async finish(
    ref: SessionRef,
    runId: string,
    opts: { epoch: number; type: FinishType; result: CodeModeResult; replyTo?: string; claimedBy?: string; trailMark?: string },
  ): Promise<{ eventId: string; result: CodeModeResult }> {
    const result = JSON.stringify(opts.result);
    const args = [
      runId,
      opts.epoch,
      opts.type,
      result,
      opts.replyTo ?? '',
      ...repairArgs(opts.result),
      String(opts.result.replaySafe),
      this.packed(() => splicedEventData('{}', [['result', result]])),
      opts.claimedBy ?? '',
      opts.trailMark ?? '',
    ];
    const raw = await guard(() => this.scripts.run(this.redis, 'finish-run', this.keys.scriptKeys(ref, runId), args));
    const reply = checkReply(raw, { runId, epoch: opts.epoch, type: opts.type });
    if (reply[0] === LUA_CODES.declined) throw new RunNotStartedError(runId, toRunStatus(reply[1]));
    return { eventId: String(reply[1]), result: withRepair(opts.result, reply[2]) };
  }

  /** The packed form of an event's data for the scripts' `packed` argument ('' to keep it as spliced). */
  private packed(data: () => string): string {
    return this.scripts.defined('COMPACT_RUNS') === 0 ? '' : (packEventData(data()) ?? '');
  }

  /**
   * API side, when no worker started the run within its budget: a still-`requested` run ends
   * with `run.failed` and `result`; otherwise answers the current status and writes nothing. With
   * `idempotencyKey` (the exec's), the key is given back: a cell that never ran does not consume it.
   * The result is published to the run's caller (the `replyTo` of its request) unless `byItsCaller`.
   */
  async abandonUnstarted(
    ref: SessionRef,
    runId: string,
    result: CodeModeResult,
    idempotencyKey?: string,
    opts: { byItsCaller?: boolean } = {},
  ): Promise<{ abandoned: true } | { abandoned: false; status: RunStatus | null }> {
    const keys = [...this.keys.scriptKeys(ref, runId), this.keys.idempotency(ref, idempotencyKey ?? '')];
    const tellCaller = opts.byItsCaller === true ? '' : '1';
    const args = [runId, JSON.stringify(result), idempotencyKey === undefined ? '' : '1', String(result.replaySafe), tellCaller];
    const raw = await guard(() => this.scripts.run(this.redis, 'abandon-run', keys, args));
    const reply = checkReply(raw, { runId, type: 'run.failed' });
    return reply[0] === LUA_CODES.ok ? { abandoned: true } : { abandoned: false, status: toRunStatus(reply[1]) };
  }

  /** The session of an earlier release's run (random id, `runloc` record) in this tenant, or null. */
  async locate(tenant: string, runId: string): Promise<string | null> {
    return guard(() => this.redis.get(this.keys.runLocation(tenant, runId)));
  }

  /**
   * API side of `wait`/abort: reserves a parked run for one resume, for `ttlMs`.
   * `busy` when another wait holds it (SPEC: already being resumed).
   */
  async reserveResume(ref: SessionRef, runId: string, token: string, ttlMs: number): Promise<Reservation> {
    return (await reserveResume(this.redis, this.keys, this.scripts, {
      ref,
      runId,
      token,
      ttlMs,
      idempotencyTtlMs: IDEMPOTENCY_TTL_SECONDS * 1000,
    })) as Reservation;
  }

  /**
   * `reserveResume` for a wait with an Idempotency-Key: the key's record is written with the
   * reservation; a key used before answers `keyUsed` instead (unless it is the record whose token
   * `replaces` names, which the caller found stale: keyedWaitStep).
   */
  reserveKeyedResume(
    ref: SessionRef,
    runId: string,
    token: string,
    ttlMs: number,
    idempotency: { key: string; replaces: string },
  ): Promise<Reservation | { reserved: false; keyUsed: KeyUsed }> {
    return reserveResume(this.redis, this.keys, this.scripts, {
      ref,
      runId,
      token,
      ttlMs,
      idempotency,
      idempotencyTtlMs: IDEMPOTENCY_TTL_SECONDS * 1000,
    });
  }

  /** The run a used wait key names, with the tokens of its last leg and of its reservation (keyedWaitStep). */
  async keyedWait(ref: SessionRef, runId: string): Promise<{ view: RunView | null; legToken: string | null; resumeToken: string | null }> {
    const { view, hash } = await readRun(this.redis, this.keys, this.scripts, ref, runId);
    return { view, legToken: hash.legToken ?? null, resumeToken: hash.resumeToken ?? null };
  }

  /** The result a parked or terminal event carries; null when the log no longer holds it. */
  async resultAt(ref: SessionRef, eventId: string): Promise<CodeModeResult | null> {
    const event = (await this.log.loggedAt(ref, [eventId])).get(eventId);
    if (!event) return null;
    const result = event.data.result;
    return result === undefined ? null : (result as CodeModeResult);
  }

  /**
   * SPEC §16: the restartSafe leg of `runId` did not answer its caller in time; its answer is owed
   * to the next wait. False when the run is no longer running (answer from the run instead).
   */
  async oweAnswer(ref: SessionRef, runId: string): Promise<boolean> {
    const raw = await guard(() => this.scripts.run(this.redis, 'owe-answer', [this.keys.run(ref, runId)], []));
    return checkReply(raw, { runId })[0] === LUA_CODES.ok;
  }

  /** Gives back a reservation the owner did not take; false when the owner already took it. */
  async giveBackResume(ref: SessionRef, runId: string, token: string): Promise<boolean> {
    const raw = await guard(() => this.scripts.run(this.redis, 'give-back-resume', [this.keys.run(ref, runId)], [token]));
    return checkReply(raw, { runId })[0] === LUA_CODES.ok;
  }

  /**
   * Worker side: takes the reservation `token` and appends `run.resumed` (with the wait input in
   * the transcript), publishing `started` to `replyTo`; false when the reservation is not there.
   */
  async resume(
    ref: SessionRef,
    runId: string,
    opts: { token: string; workerId: string; epoch: number; replyTo: string; input: unknown },
  ): Promise<boolean> {
    const args = [runId, opts.token, opts.workerId, opts.epoch, opts.replyTo, JSON.stringify(opts.input) ?? 'null'];
    const raw = await this.index.alongside(ref, () =>
      guard(() => this.scripts.run(this.redis, 'resume-run', this.keys.scriptKeys(ref, runId), args)),
    );
    return checkReply(raw, { runId, epoch: opts.epoch, type: 'run.resumed' })[0] === LUA_CODES.ok;
  }

  /** `run.parked` and the run's image in one step (run-parking.ts); fenced as any run event. */
  park(ref: SessionRef, input: ParkInput): Promise<{ eventId: string }> {
    return parkRun(this.redis, this.keys, this.scripts, ref, input, (event) => this.log.append(ref, event));
  }

  /** Appends any other run event (expiry, loss, …) through the generic fenced path. */
  append(ref: SessionRef, input: AppendInput): Promise<{ eventId: string }> {
    return this.log.append(ref, input);
  }

  /**
   * An exec/wait refused on its input: `exec.rejected` plus transcript input and result marks.
   * A refused exec is a failed cell of its session (SPEC §16, reject-exec.lua): answers its result
   * with its `repair`. A refused wait leaves the run, and the count, untouched.
   */
  async reject(ref: SessionRef, call: 'exec' | 'wait', input: unknown, result: CodeModeResult): Promise<CodeModeResult> {
    return (await this.rejectRecorded(ref, call, input, result)).result;
  }

  /** `reject`, with the id of its `exec.rejected` event (an MCP task names a refused exec by it: SPEC §14). */
  async rejectRecorded(
    ref: SessionRef,
    call: 'exec' | 'wait',
    input: unknown,
    result: CodeModeResult,
  ): Promise<{ result: CodeModeResult; eventId: string }> {
    if (call === 'wait') {
      const { eventId } = await this.log.append(ref, { type: 'exec.rejected', data: { call, input: input ?? null, result } });
      return { result, eventId };
    }
    const args = [JSON.stringify(input ?? null), JSON.stringify(result), ...repairArgs(result)];
    const raw = await this.index.alongside(ref, () =>
      guard(() => this.scripts.run(this.redis, 'reject-exec', this.keys.scriptKeys(ref, ''), args)),
    );
    const reply = checkReply(raw, { type: 'exec.rejected' });
    return { result: withRepair(result, reply[2]), eventId: String(reply[1]) };
  }

  /** The run as a wait that may answer at once reads it (idle-wait.ts). */
  readIdleWait(ref: SessionRef, runId: string): Promise<IdleWaitRead> {
    return readIdleWait(this.redis, this.keys, this.scripts, ref, runId);
  }

  /** SPEC §18: `run.waited`, if the run is still as read and held by no wait (idle-wait.ts); a wait is activity of its session. */
  answerIdleWait(
    ref: SessionRef,
    seen: { runId: string; lastEvent: string },
    data: { input: unknown; result: WaitingResult },
  ): Promise<boolean> {
    return this.index.alongside(ref, () => answerIdleWait(this.redis, this.keys, this.scripts, ref, seen, data));
  }

  /** The run's status alone, null when there is no run: what a worker looks at before it starts a new cell unclaimed (SPEC §13). */
  async status(ref: SessionRef, runId: string): Promise<RunStatus | null> {
    const status = await guard(() => this.redis.hget(this.keys.run(ref, runId), 'status'));
    if (status !== null) return toRunStatus(status);
    // Gone or folded into its record (lua/includes/run-record.lua): the record says how it ended.
    const record = await guard(() => this.redis.hget(this.keys.pastRuns(ref), pastField(runId)));
    return toRunStatus(keptRecordFields(record, this.scripts.defined('RETENTION_MS') ?? 0, Date.now())?.status ?? null);
  }

  async get(ref: SessionRef, runId: string): Promise<RunView | null> {
    return (await readRun(this.redis, this.keys, this.scripts, ref, runId)).view;
  }

  /** The session's transcript in log order, derived from the log; null when the session was never created. */
  transcript(ref: SessionRef): Promise<TranscriptEntry[] | null> {
    return this.transcripts.read(ref);
  }

  /**
   * Recovery: takes the run over from `from` (the owner and epoch the caller saw), bumping its
   * epoch so the old owner's writes are rejected from now on (`run.recovered`). With `token`, a
   * parked run reserved by that wait; without, a running run whose cell job was re-delivered.
   */
  async takeOver(
    ref: SessionRef,
    runId: string,
    opts: { workerId: string; from: { owner: string | null; epoch: number }; token?: string; reason: string },
  ): Promise<{ taken: true; epoch: number } | { taken: false; status: RunStatus | null }> {
    const args = [runId, opts.workerId, opts.from.owner ?? '', opts.from.epoch, opts.token ?? '', opts.reason];
    const raw = await guard(() => this.scripts.run(this.redis, 'take-over-run', this.keys.scriptKeys(ref, runId), args));
    const reply = checkReply(raw, { runId, type: 'run.recovered' });
    return reply[0] === LUA_CODES.ok ? { taken: true, epoch: Number(reply[1]) } : { taken: false, status: toRunStatus(reply[1]) };
  }

  /** Gives up a parked run this worker holds at `epoch` (`run.released`): the next wait replays it. */
  async release(ref: SessionRef, runId: string, opts: { workerId: string; epoch: number; reason: string }): Promise<boolean> {
    const args = [runId, opts.workerId, opts.epoch, opts.reason];
    const raw = await guard(() => this.scripts.run(this.redis, 'release-run', this.keys.scriptKeys(ref, runId), args));
    return checkReply(raw, { runId, epoch: opts.epoch, type: 'run.released' })[0] === LUA_CODES.ok;
  }
}

/**
 * request-run's reply to a second attempt of one request: the run exists under its id, or its
 * idempotency key names it. ioredis resends every command of a batch whose connection closed
 * (a primary killed mid-batch) once the failover is over, also one that ran and replicated before
 * the kill: that attempt's writes are this request's, identical (the same command).
 */
function resentRequest(raw: unknown, runId: string): boolean {
  if (!Array.isArray(raw)) return false;
  return raw[0] === LUA_CODES.runExists || (raw[0] === LUA_CODES.declined && raw[1] === runId);
}
