import type { BridgeMethod, GuestCatalog } from '@codemode/contracts';
import type { LoggedEvent } from '@codemode/events';
import type { RestorePlan } from '@codemode/sandbox';

/** A call open when the run parked, as its image's record lists it. */
export interface OpenCallRecord {
  id: string;
  method: BridgeMethod;
  args: unknown;
  /** Dispatched at the park (not queued, not a yield). */
  inFlight: boolean;
}

/** Host surfaces that read or overwrite only: making them again changes nothing the run already saw. */
const REPEATABLE_METHODS: ReadonlySet<BridgeMethod> = new Set(['search', 'describe', 'api', 'load', 'store', 'resultLoad']);

/**
 * SPEC §12: how a run restored from its image settles the calls that were open at its park, from
 * its log (`events`: the run's own, oldest first) and its catalog now. A dispatched call (in flight
 * at the park, or queued then and dispatched while parked) is answered from the log when the log
 * recorded its outcome (platform answers, replay-safe runs' results); else, a platform call keeps
 * waiting for the platform, a call still waiting for its approval (SPEC §11: requested, never
 * dispatched) and a replay-safe tool or host surface are made again (the approval is found again
 * with its decision), and any other call is lost: its id is answered and the run fails. Timers and yields are the engine's; queued calls
 * never dispatched start as usual.
 */
export function restorePlan(
  calls: readonly OpenCallRecord[],
  events: readonly LoggedEvent[],
  catalog: GuestCatalog,
): RestorePlan | { lost: string } {
  const platformCalls = new Set<string>();
  const dispatched = new Set<string>();
  const outcomes = new Map<string, { ok: boolean; payload: string } | null>();
  const approvalAsked = new Set<string>();
  for (const event of events) {
    const callId = event.data.callId;
    if (typeof callId !== 'string') continue;
    if (event.type === 'approval.requested') approvalAsked.add(callId);
    else if (event.type === 'tool.called') {
      dispatched.add(callId);
      if (event.data.answeredBy === 'platform') platformCalls.add(callId);
    } else if (event.type === 'tool.settled') {
      outcomes.set(callId, recordedOutcome(event.data));
    }
  }
  const plan: RestorePlan = { answers: [], redo: [], platform: [] };
  for (const call of calls) {
    if (call.method === 'yield' || call.method === 'sleep') continue;
    if (!call.inFlight && !dispatched.has(call.id)) continue;
    const outcome = outcomes.get(call.id);
    if (outcome) {
      plan.answers.push({ id: call.id, ...outcome });
    } else if (outcome === undefined && platformCalls.has(call.id)) {
      if (call.inFlight) plan.platform.push(call.id);
    } else if (repeatable(call, catalog) || (approvalAsked.has(call.id) && !dispatched.has(call.id))) {
      if (call.inFlight) plan.redo.push(call.id);
    } else {
      return { lost: call.id };
    }
  }
  return plan;
}

/** The outcome as the guest sees it, when the log has it: the result's JSON, or the `{name, message}` it rejected with. */
function recordedOutcome(data: Record<string, unknown>): { ok: boolean; payload: string } | null {
  if (data.ok === true && 'result' in data) return { ok: true, payload: JSON.stringify(data.result ?? null) };
  const failure = data.failure as { name?: unknown; message?: unknown } | undefined;
  if (data.ok === false && typeof failure?.message === 'string') {
    return {
      ok: false,
      payload: JSON.stringify({ name: typeof failure.name === 'string' ? failure.name : 'Error', message: failure.message }),
    };
  }
  return null;
}

function repeatable(call: OpenCallRecord, catalog: GuestCatalog): boolean {
  if (REPEATABLE_METHODS.has(call.method)) return true;
  if (call.method !== 'callValue') return false;
  const tool = (call.args as { tool?: unknown } | null)?.tool;
  return catalog.globals.some((global) => global.metadata.callableName === tool && global.replaySafe);
}
