import { ToolResultsInputSchema, type ToolResult } from '@codemode/contracts';
import { BODY_NOT_JSON_ERROR } from '../http/request-context';

export type ToolResultsCheck = { ok: true; results: ToolResult[] } | { ok: false; error: string; field?: string };

/** The `tool-results` body against its schema; the first issue names the field. */
export function checkToolResults(value: unknown): ToolResultsCheck {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, error: BODY_NOT_JSON_ERROR };
  const parsed = ToolResultsInputSchema.safeParse(value);
  if (parsed.success) return { ok: true, results: parsed.data.results };
  const issue = parsed.error.issues[0];
  const field = issue.path.map(String).join('.') || 'results';
  return { ok: false, error: `${field}: ${issue.message}`, field };
}
