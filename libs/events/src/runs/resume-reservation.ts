import type { RunStatus, SessionRef } from '@codemode/contracts';
import type { KeySpace } from '../platform/keys';
import { checkReply, LUA_CODES, toRunStatus } from '../platform/lua-errors';
import { guard, type RedisClient } from '../platform/redis';
import type { ScriptLoader } from '../platform/script-loader';

/** What reserving a parked run for a wait found (reserve-resume). */
export type Reservation =
  | { reserved: true; owner: string; epoch: number; restartSafe: boolean; expiresAt: string | null }
  | {
      reserved: false;
      busy: boolean;
      status: RunStatus | null;
      restartSafe: boolean;
      /** Not waiting: the run's owner ('' for none). */
      owner?: string;
      /**
       * SPEC §16: the answer of the run's leg is owed to this wait (owe-answer). `status` running:
       * the leg still runs; otherwise it parked or ended, and this wait took the answer (the run's own).
       */
      answerOwed?: boolean;
      /** Busy: the reservation that holds it. */
      held?: { token: string; forMs: number; owner: string };
    };

/** A wait Idempotency-Key used before (reserve-resume): its run, the first wait's token, and what is known of its answer. */
export interface KeyUsed {
  runId: string;
  token: string;
  /** The stream id of the first wait's answer, once a later leg moved the run past it. */
  answerEvent: string | null;
  /** How long the first wait's reservation has held the run, while it still does. */
  heldForMs: number | null;
}

/** One wait's reservation of a parked run (`RunLedger.reserveResume` and `reserveKeyedResume`). */
export interface ReservationInput {
  ref: SessionRef;
  runId: string;
  token: string;
  ttlMs: number;
  /** A wait with an Idempotency-Key: the key's record is written with the reservation. */
  idempotency?: { key: string; replaces: string };
  /** How long that record is kept (SPEC §2). */
  idempotencyTtlMs: number;
}

/**
 * Reserves a parked run for one resume (lua/reserve-resume.lua) and reads its answer: reserved,
 * refused (busy, not waiting, its answer owed to this wait), or, for a key used before, that key's
 * first wait (`keyUsed`).
 */
export async function reserveResume(
  redis: RedisClient,
  keys: KeySpace,
  scripts: ScriptLoader,
  input: ReservationInput,
): Promise<Reservation | { reserved: false; keyUsed: KeyUsed }> {
  const { ref, runId, token, ttlMs, idempotency } = input;
  const scriptKeys = [keys.run(ref, runId), keys.waitIdempotency(ref, idempotency?.key ?? '')];
  const args = [token, ttlMs, idempotency ? '1' : '', idempotency?.replaces ?? '', input.idempotencyTtlMs];
  const raw = await guard(() => scripts.run(redis, 'reserve-resume', scriptKeys, args));
  const reply = checkReply(raw, { runId });
  if (reply[0] === LUA_CODES.ok) {
    return {
      reserved: true,
      owner: String(reply[1]),
      epoch: Number(reply[2]),
      restartSafe: reply[3] === 'true',
      expiresAt: reply[4] ? String(reply[4]) : null,
    };
  }
  if (reply[0] === 3) {
    const [, usedRunId, usedToken, answerEvent, heldForMs] = reply;
    return {
      reserved: false,
      keyUsed: {
        runId: String(usedRunId),
        token: String(usedToken),
        answerEvent: answerEvent || null,
        heldForMs: heldForMs ? Number(heldForMs) : null,
      },
    };
  }
  const refused = { reserved: false as const, busy: reply[0] === 2, status: toRunStatus(reply[1]), restartSafe: reply[2] === 'true' };
  if (reply[0] === 4) return { ...refused, answerOwed: true };
  if (reply[0] === 2 && reply[3])
    return { ...refused, held: { token: String(reply[3]), forMs: Number(reply[4]), owner: String(reply[5] ?? '') } };
  if (reply[0] === 0 && reply[1]) return { ...refused, owner: String(reply[3] ?? ''), ...(reply[4] ? { answerOwed: true } : {}) };
  return refused;
}
