import { RepeatableCalls } from '@codemode/catalog';
import { decodeEventData, openPlatformCalls, type BridgeMethod, type GuestCatalog } from '@codemode/contracts';
import type { LoggedEvent } from '@codemode/events';
import type { RestorePlan } from '@codemode/sandbox';
import { recordedOutcome } from './run-history';

/** A call open when the run parked, as its image's record lists it. */
export interface OpenCallRecord {
  id: string;
  method: BridgeMethod;
  args: unknown;
  /** Dispatched at the park (not queued, not a yield). */
  inFlight: boolean;
}

/** Host surfaces that read or overwrite only: making them again changes nothing the run already saw (tool calls: `RepeatableCalls`). */
const REPEATABLE_METHODS: ReadonlySet<BridgeMethod> = new Set(['search', 'describe', 'api', 'load', 'store', 'resultLoad']);

/**
 * SPEC §12: how a run restored from its image settles the calls that were open at its park, from
 * its log (`events`: the run's own, oldest first) and its catalog now. A dispatched call (in flight
 * at the park, or queued then and dispatched while parked) is answered from the log when the log
 * recorded its outcome (platform answers, replay-safe runs' results); else, a platform call keeps
 * waiting for the platform, a call still waiting for its approval (SPEC §11: requested, never
 * dispatched), a replay-safe tool or host surface, and an idempotent client or MCP tool (SPEC §16: with the same
 * callKey, which the sandbox gives it again) are made again (the approval is found again
 * with its decision), and any other call is lost: its id is answered and the run fails. Timers and yields are the engine's; queued calls
 * never dispatched start as usual.
 */
export function restorePlan(
  calls: readonly OpenCallRecord[],
  events: readonly LoggedEvent[],
  catalog: GuestCatalog,
): RestorePlan | { lost: string } {
  const platformCalls = openPlatformCalls(events);
  const dispatched = new Set<string>();
  const outcomes = new Map<string, { ok: boolean; payload: string } | null>();
  const approvalAsked = new Set<string>();
  for (const event of events) {
    if (event.type === 'approval.requested') {
      const asked = decodeEventData(event.type, event.data);
      if (asked) approvalAsked.add(asked.callId);
    } else if (event.type === 'tool.called') {
      const called = decodeEventData(event.type, event.data);
      if (called) dispatched.add(called.callId);
    } else if (event.type === 'tool.settled') {
      const settled = decodeEventData(event.type, event.data);
      if (settled) outcomes.set(settled.callId, recordedOutcome(settled));
    }
  }
  const repeatable = new RepeatableCalls(catalog);
  const plan: RestorePlan = { answers: [], redo: [], platform: [] };
  for (const call of calls) {
    if (call.method === 'yield' || call.method === 'sleep') continue;
    if (!call.inFlight && !dispatched.has(call.id)) continue;
    const outcome = outcomes.get(call.id);
    if (outcome) {
      plan.answers.push({ id: call.id, ...outcome });
    } else if (platformCalls.has(call.id)) {
      if (call.inFlight) plan.platform.push(call.id);
    } else if (
      REPEATABLE_METHODS.has(call.method) ||
      repeatable.toolCall(call.method, call.args) ||
      (approvalAsked.has(call.id) && !dispatched.has(call.id))
    ) {
      if (call.inFlight) plan.redo.push(call.id);
    } else {
      return { lost: call.id };
    }
  }
  return plan;
}
