import { guestSource } from './guest-source';

/** Limits of one console call (SPEC §3 Output). Exported so tests and docs use one source. */
export const CONSOLE_INSPECT_LIMITS = {
  maxValues: 100,
  maxProperties: 50,
  maxDepth: 4,
  maxStringUnits: 512,
  maxMessageUnits: 4096,
} as const;

/** SPEC §3: what a logged (or emitted) promise prints, telling the model to await it. */
export const UNAWAITED_PROMISE_TEXT = '[Unawaited Promise: use await or Promise.all(...) before emitting or returning values.]';

/** Guest console formatting (`console-inspect.guest.js`): evaluates to `format(method, args) => string`. */
export const CONSOLE_INSPECT_SOURCE = guestSource('console-inspect', {
  MAX_VALUES: String(CONSOLE_INSPECT_LIMITS.maxValues),
  MAX_PROPERTIES: String(CONSOLE_INSPECT_LIMITS.maxProperties),
  MAX_DEPTH: String(CONSOLE_INSPECT_LIMITS.maxDepth),
  MAX_STRING_UNITS: String(CONSOLE_INSPECT_LIMITS.maxStringUnits),
  MAX_MESSAGE_UNITS: String(CONSOLE_INSPECT_LIMITS.maxMessageUnits),
  UNAWAITED_PROMISE_TEXT: JSON.stringify(UNAWAITED_PROMISE_TEXT),
});
