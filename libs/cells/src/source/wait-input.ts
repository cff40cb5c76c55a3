import { isJsonObject, own } from './exec-input';
import { BODY_NOT_OBJECT_ERROR, RUN_ID_ERROR } from './messages';

export type WaitInputCheck = { ok: true; runId: string } | { ok: false; error: string };

/**
 * The body of `wait`: `runId`, or OpenClaw's `run_id` spelling when `runId` is absent (or null).
 * A run id that is missing, blank or not a string is the one error; the id is trimmed, as
 * OpenClaw does, since models pad ids they copy.
 */
export function checkWaitInput(body: unknown): WaitInputCheck {
  if (!isJsonObject(body)) return { ok: false, error: BODY_NOT_OBJECT_ERROR };
  const runId = own(body, 'runId') ?? own(body, 'run_id');
  if (typeof runId !== 'string' || runId.trim() === '') return { ok: false, error: RUN_ID_ERROR };
  return { ok: true, runId: runId.trim() };
}
