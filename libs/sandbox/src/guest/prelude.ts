import { MAX_JSON_DEPTH } from '@codemode/contracts';
import { SET_TIMEOUT_DELAY_MESSAGE } from '@codemode/cells';
import { UNAWAITED_PROMISE_TEXT } from './console-inspect';
import { guestSource } from './guest-source';
import { TOOL_API_SOURCE } from './tool-api';

/** Script name of the prelude; its frames are dropped from guest error stacks. */
export const PRELUDE_FILE = 'codemode:prelude.js';
/** Script name of the user's cell; its line numbers equal the user's lines. */
export const CELL_FILE = 'cell.js';
/** The cell body is wrapped on the same first line, so only line 1 columns shift (by its length). */
export const CELL_PREFIX = '(async function () {';
export const CELL_SUFFIX = '\n})';

/** Output kinds the prelude hands to the host `out` function. */
export const OUT_TEXT = 0;
export const OUT_JSON = 1;
export const OUT_CONSOLE = 2;

/** The guest prelude (`prelude.guest.js`): evaluates to `install(out, request, cancel, inspect)`. */
export const PRELUDE_SOURCE = guestSource('prelude', {
  TOOL_API: TOOL_API_SOURCE,
  UNAWAITED_PROMISE_TEXT: JSON.stringify(UNAWAITED_PROMISE_TEXT),
  SET_TIMEOUT_DELAY_MESSAGE: JSON.stringify(SET_TIMEOUT_DELAY_MESSAGE),
  MAX_JSON_DEPTH: JSON.stringify(MAX_JSON_DEPTH),
});
