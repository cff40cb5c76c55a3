import { checkExecInput, type ExecInputCheck } from '@codemode/cells';

/** What the exec path needs of its body: the SPEC §3 input check and what a refusal records. */
export interface ExecBody {
  check: ExecInputCheck;
  /** `restartSafe: true` as sent, so even a refused body answers with the right `replaySafe`. */
  replaySafe: boolean;
  /** What the transcript keeps of the body when it is refused. */
  summary: unknown;
}

/**
 * Checks a parsed exec body. Its cost grows with the code (acorn parses it), so a large body is
 * checked on a body thread (`BodyThreads`) and only this small answer comes back.
 */
export function checkExecBody(value: unknown): ExecBody {
  return { check: checkExecInput(value), replaySafe: isRecord(value) && value.restartSafe === true, summary: summarize(value) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What the transcript keeps of a refused body: the fields a reader needs, bounded. */
function summarize(value: unknown): unknown {
  if (!isRecord(value)) return { bodyType: Array.isArray(value) ? 'array' : typeof value };
  const out: Record<string, unknown> = {};
  for (const key of ['title', 'code', 'command', 'language', 'typecheck', 'restartSafe', 'awaitResults', 'runId', 'run_id']) {
    const field = value[key];
    if (field === undefined) continue;
    if (typeof field === 'string') out[key] = field.length > 4096 ? `${field.slice(0, 4096)}…` : field;
    else out[key] = JSON.stringify(field).length > 4096 ? '[omitted: over 4096 characters]' : field;
  }
  return out;
}
