import type { RunView, SessionRef, WaitingResult } from '@codemode/contracts';
import { encodeEvent, rawsAndFactsArgs } from '../log/event-encoding';
import { readRun } from './run-read';
import type { KeySpace } from '../platform/keys';
import { checkReply } from '../platform/lua-errors';
import { guard, type RedisClient } from '../platform/redis';
import type { ScriptLoader } from '../platform/script-loader';

/** A run as a wait that may answer at once reads it: its view, and its last event ('' if none recorded). */
export interface IdleWaitRead {
  run: RunView | null;
  lastEvent: string;
}

/** The run, with the `lastEvent` answerIdleWait is conditioned on. */
export async function readIdleWait(
  redis: RedisClient,
  keys: KeySpace,
  scripts: ScriptLoader,
  ref: SessionRef,
  runId: string,
): Promise<IdleWaitRead> {
  const { view, hash } = await readRun(redis, keys, scripts, ref, runId);
  return { run: view, lastEvent: hash.lastEvent ?? '' };
}

/**
 * SPEC §18: records a wait answered at once (`run.waited`, lua/answer-idle-wait.lua), if the run is
 * still as read (`lastEvent`) and held by no wait; false: nothing written, the wait goes the
 * ordinary way.
 */
export async function answerIdleWait(
  redis: RedisClient,
  keys: KeySpace,
  scripts: ScriptLoader,
  ref: SessionRef,
  seen: { runId: string; lastEvent: string },
  data: { input: unknown; result: WaitingResult },
): Promise<boolean> {
  const ev = encodeEvent('run.waited', data);
  const args = [seen.runId, seen.lastEvent, ...rawsAndFactsArgs(ev)];
  const raw = await guard(() => scripts.run(redis, 'answer-idle-wait', keys.scriptKeys(ref, seen.runId), args));
  return checkReply(raw, { runId: seen.runId, type: 'run.waited' })[0] === 1;
}
