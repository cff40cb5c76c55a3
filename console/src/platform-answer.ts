import { ApiProblem, apiAnswer, sessionPath } from './api.js';
import { h } from './elements.js';

/**
 * The operator answers a call only the platform answers (SPEC §12), as the platform would:
 * `POST …/tool-results` with one result, a JSON value or an error message. `answered` gets the
 * line to show: the API's status and answer, or its error text. The run takes the answer at its
 * next `wait`, which this form does not send.
 */
export function platformAnswerForm(
  sid: string,
  runId: string,
  callId: string,
  signal: AbortSignal,
  answered: (line: string) => void,
): HTMLFormElement {
  const ids = `answer-${callId.replace(/[^a-z0-9]+/gi, '-')}`;
  const kind = h(
    'select',
    { id: `${ids}-kind`, name: 'kind' },
    h('option', { value: 'value' }, 'a value (JSON)'),
    h('option', { value: 'error' }, 'an error (message)'),
  );
  const body = h('textarea', { id: `${ids}-body`, name: 'body', rows: 3, spellcheck: 'false', required: true });
  const send = h('button', { type: 'submit' }, 'Send answer');
  const problem = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const form = h(
    'form',
    { class: 'platform-answer', 'aria-label': `Answer ${callId}` },
    h('label', { for: kind.id }, 'Answer with '),
    kind,
    h('label', { for: body.id }, 'Answer'),
    body,
    send,
    problem,
  );
  form.addEventListener('submit', (submitted) => {
    submitted.preventDefault();
    const result = resultOf(callId, kind.value, body.value);
    if (typeof result === 'string') {
      problem.hidden = false;
      problem.textContent = result;
      return;
    }
    problem.hidden = true;
    send.setAttribute('disabled', '');
    const path = `${sessionPath(sid)}/runs/${encodeURIComponent(runId)}/tool-results`;
    apiAnswer<unknown>('POST', path, { results: [result] }, signal).then(
      (answer) => answered(`The API answered ${answer.status}: ${JSON.stringify(answer.body)}. The run takes it at its next wait.`),
      (error: unknown) => {
        if (signal.aborted) return;
        send.removeAttribute('disabled');
        problem.hidden = false;
        problem.textContent =
          error instanceof ApiProblem ? `The API refused the answer (${error.status}): ${error.message}` : String(error);
      },
    );
  });
  return form;
}

type Result = { id: string; ok: true; value: unknown } | { id: string; ok: false; error: string };

/** The result to post, or why the form cannot send it. */
function resultOf(id: string, kind: string, body: string): Result | string {
  if (kind === 'error') return body.trim() ? { id, ok: false, error: body } : 'Write the error message the call should fail with.';
  try {
    return { id, ok: true, value: JSON.parse(body) as unknown };
  } catch {
    return 'The value is not JSON: write e.g. {"n": 41}, "text" or 42.';
  }
}
