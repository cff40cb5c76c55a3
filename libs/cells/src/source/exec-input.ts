import type { ValidExecInput } from '@codemode/contracts';
import {
  AWAIT_RESULTS_ERROR,
  BODY_NOT_OBJECT_ERROR,
  CODE_COMMAND_MISMATCH_ERROR,
  CODE_REQUIRED_ERROR,
  CODE_TOO_LARGE_ERROR,
  JAVASCRIPT_ONLY_ERROR,
  MAX_CODE_BYTES,
  MAX_TITLE_CHARS,
  RESTART_SAFE_ERROR,
  TITLE_REQUIRED_ERROR,
  TITLE_TOO_LONG_ERROR,
} from './messages';
import { checkCellSource } from './source-check';

export type ExecInputCheck = { ok: true; input: ValidExecInput } | { ok: false; error: string };

type JsonObject = Record<string, unknown>;

/**
 * Applies every SPEC §3 input rule, in a fixed order, to the parsed JSON body of `exec`; the
 * first rule broken names the error. The order:
 *
 * 1. body is a JSON object;
 * 2. `title` (first field of the contract): a non-blank string of at most 120 characters;
 * 3. `code`/`command`: blank counts as absent; both present and different, then neither present;
 * 4. `language`/`typecheck` present;
 * 5. `restartSafe`, then `awaitResults`, not boolean;
 * 6. code over 1 MiB of UTF-8 — before any parsing, which it bounds;
 * 7. module access, 8. shell shape, 9. syntax error (see {@link checkCellSource}).
 *
 * Steps 3–5 and 7–9 follow OpenClaw's `readCode` and `prepareSource`.
 */
export function checkExecInput(body: unknown): ExecInputCheck {
  if (!isJsonObject(body)) return refuse(BODY_NOT_OBJECT_ERROR);
  const title = own(body, 'title');
  if (typeof title !== 'string' || title.trim() === '') return refuse(TITLE_REQUIRED_ERROR);
  if (exceedsCodePoints(title, MAX_TITLE_CHARS)) return refuse(TITLE_TOO_LONG_ERROR);

  const code = nonBlankString(own(body, 'code'));
  const command = nonBlankString(own(body, 'command'));
  if (code !== undefined && command !== undefined && code !== command) return refuse(CODE_COMMAND_MISMATCH_ERROR);
  const source = code ?? command;
  if (source === undefined) return refuse(CODE_REQUIRED_ERROR);

  if (own(body, 'language') !== undefined || own(body, 'typecheck') !== undefined) {
    return refuse(JAVASCRIPT_ONLY_ERROR);
  }
  const restartSafe = own(body, 'restartSafe');
  if (restartSafe !== undefined && typeof restartSafe !== 'boolean') return refuse(RESTART_SAFE_ERROR);
  const awaitResults = own(body, 'awaitResults');
  if (awaitResults !== undefined && typeof awaitResults !== 'boolean') return refuse(AWAIT_RESULTS_ERROR);

  if (exceedsUtf8Bytes(source, MAX_CODE_BYTES)) return refuse(CODE_TOO_LARGE_ERROR);
  const sourceError = checkCellSource(source);
  if (sourceError !== null) return refuse(sourceError);

  return {
    ok: true,
    input: { title, code: source, restartSafe: restartSafe === true, awaitResults: awaitResults === true },
  };
}

function refuse(error: string): { ok: false; error: string } {
  return { ok: false, error };
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Own properties only: a key the client did not send is absent, whatever the prototype holds. */
export function own(body: JsonObject, key: string): unknown {
  return Object.hasOwn(body, key) ? body[key] : undefined;
}

/** Kept as written (not trimmed): the code runs exactly as the model sent it. */
function nonBlankString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** Counts code points, stopping early: a 1 MiB title is not walked to the end. */
function exceedsCodePoints(text: string, max: number): boolean {
  if (text.length <= max) return false;
  let count = 0;
  for (const _char of text) {
    count += 1;
    if (count > max) return true;
  }
  return false;
}

/** A UTF-16 unit is 1 to 3 UTF-8 bytes, so most sizes are decided without encoding. */
function exceedsUtf8Bytes(text: string, limit: number): boolean {
  if (text.length * 3 <= limit) return false;
  if (text.length > limit) return true;
  return Buffer.byteLength(text, 'utf8') > limit;
}
