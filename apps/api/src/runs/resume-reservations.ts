import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Limits, SessionRef } from '@codemode/contracts';
import { effectiveLimits, type AppConfig } from '@codemode/config';
import { RunLedger, RunReplies, SessionLedger, type KeyUsed, type Reservation } from '@codemode/events';
import type { Logger } from '@codemode/telemetry';
import { CellQueue } from '../queues/cell-queue';
import { WorkerQueues } from '../queues/worker-queues';
import { APP_CONFIG, LOGGER } from '../core/tokens';

/** A reservation lapses after this if its API instance vanished (longer than any wait). */
export const RESERVATION_TTL_MS = 130_000;
/** A reservation this old with no resume job anywhere was left by a wait that died (see `abandoned`). */
const ABANDONED_RESERVATION_MS = 1000;

/** Takes back a resume job nobody took in time. */
export type Withdraw = () => Promise<unknown>;
export type ReservedOrKeyUsed = Reservation | { reserved: false; keyUsed: KeyUsed };

/**
 * A wait's reservation of a parked run (SPEC §3: one resume at a time) and the resume job it
 * routes: to the run's owner, or to any worker to restore or replay it. A reservation whose wait
 * died before routing its job is found and released here, so the next wait need not wait for it
 * to lapse.
 */
@Injectable()
export class ResumeReservations {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runs: RunLedger,
    private readonly sessions: SessionLedger,
    private readonly replies: RunReplies,
    private readonly workers: WorkerQueues,
    private readonly cells: CellQueue,
  ) {}

  /**
   * Reserves the run for a wait. One round trip: the reservation script answers every refusal
   * case too, and the session's limits are read alongside it (auto-pipelined). A reservation left
   * by a wait that died is released and the reservation tried again.
   */
  reserve(ref: SessionRef, runId: string): Promise<{ token: string; reservation: Reservation; limits: Limits }>;
  reserve(
    ref: SessionRef,
    runId: string,
    idempotency: { key: string; replaces: string },
  ): Promise<{ token: string; reservation: ReservedOrKeyUsed; limits: Limits }>;
  async reserve(
    ref: SessionRef,
    runId: string,
    idempotency?: { key: string; replaces: string },
  ): Promise<{ token: string; reservation: ReservedOrKeyUsed; limits: Limits }> {
    for (;;) {
      const token = randomUUID();
      const [reservation, session] = await Promise.all([
        idempotency
          ? this.runs.reserveKeyedResume(ref, runId, token, RESERVATION_TTL_MS, idempotency)
          : this.runs.reserveResume(ref, runId, token, RESERVATION_TTL_MS),
        this.sessions.get(ref),
      ]);
      if (!reservation.reserved && 'held' in reservation && reservation.held && (await this.abandoned(ref, runId, reservation.held)))
        continue;
      return { token, reservation, limits: effectiveLimits(this.config, ref.tenant, session?.codeMode) };
    }
  }

  /** Queues the resume job; answers how to take it back if nobody takes it in time. */
  async send(ref: SessionRef, runId: string, token: string, fate: 'held' | 'restore' | 'replay', owner: string): Promise<Withdraw> {
    const requestedAt = Date.now();
    const replyTo = this.replies.channelFor(ref);
    const input = { runId };
    // A restore and a replay are the same job: the worker taking it restores the image when it can.
    if (fate !== 'held') {
      const jobId = await this.cells.replay({
        tenant: ref.tenant,
        sessionId: ref.sessionId,
        runId,
        replyTo,
        resume: { token, input },
        requestedAt,
      });
      return () => this.cells.withdraw(ref, jobId);
    }
    const jobId = await this.workers.resume(owner, {
      tenant: ref.tenant,
      sessionId: ref.sessionId,
      runId,
      token,
      replyTo,
      input,
      requestedAt,
    });
    return () => this.workers.withdraw(owner, jobId);
  }

  /**
   * A reservation whose wait died with its API instance before it routed the resume (or whose
   * resume job failed): older than a moment and with no job for its token in any queue. It is
   * released, so this wait can go on instead of waiting for the reservation to lapse.
   */
  async abandoned(ref: SessionRef, runId: string, held: { token: string; forMs: number; owner: string }): Promise<boolean> {
    if (held.forMs < ABANDONED_RESERVATION_MS) return false;
    const [ownerJob, replayJob] = await Promise.all([
      held.owner ? this.workers.hasResumeJob(held.owner, held.token) : Promise.resolve(false),
      this.cells.hasReplayJob(ref, held.token),
    ]);
    if (ownerJob || replayJob) return false;
    const released = await this.runs.giveBackResume(ref, runId, held.token);
    if (released)
      this.logger.warn(
        { tenant: ref.tenant, sessionId: ref.sessionId, runId, heldForMs: held.forMs },
        'released a wait reservation whose resume was never routed',
      );
    return released;
  }
}
