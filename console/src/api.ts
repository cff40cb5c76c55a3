import type { ApiErrorBody } from '@codemode/contracts';
import { storedKey } from './key-store.js';

/** An answer other than 2xx, with the `{error, code}` body when the API sent one. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly body: Partial<ApiErrorBody> | null,
    message: string,
  ) {
    super(message);
  }
}

/** Raised for 401 so the shell can ask for a key again. */
export class KeyRefused extends ApiProblem {}

export function authHeaders(): Record<string, string> {
  const key = storedKey();
  return key ? { authorization: `Bearer ${key}` } : {};
}

/** Calls `/v1…` with the stored key; resolves to the JSON answer, rejects with ApiProblem. */
export async function api<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  return (await apiAnswer<T>(method, path, body, signal)).body;
}

/** As `api`, with the status of a 2xx answer: for views that show the operator what the API said. */
export async function apiAnswer<T>(
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<{ status: number; body: T }> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      signal,
      headers: { accept: 'application/json', ...authHeaders(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ApiProblem(0, null, 'The API did not answer. Check that it is running, then retry.');
  }
  const text = await res.text();
  const parsed = parse(text);
  if (res.ok) return { status: res.status, body: parsed as T };
  const problem = parsed && typeof parsed === 'object' ? (parsed as Partial<ApiErrorBody>) : null;
  const message = problem?.error ?? `HTTP ${res.status}`;
  if (res.status === 401) throw new KeyRefused(401, problem, message);
  throw new ApiProblem(res.status, problem, message);
}

function parse(text: string): unknown {
  try {
    return text === '' ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

export const sessionPath = (sid: string): string => `/v1/sessions/${encodeURIComponent(sid)}`;
