import { h, notice } from './elements.js';
import { duration, json } from './format.js';
import { platformAnswerForm } from './platform-answer.js';
import { bounded, SHOWN_CHARS, type CallState, type Recorded, type ToolCall } from './tool-calls.js';

const NOT_KEPT = 'not recorded (run not replay-safe)';

/**
 * The run's tool calls, each with its input and outcome as the log holds them (cut at
 * SHOWN_CHARS). A call's item is rebuilt only when its state changes, so an operator typing an
 * answer to a platform call does not lose it when another event arrives.
 */
export function toolCallList(sid: string, runId: string, signal: AbortSignal): { element: HTMLElement; update(calls: ToolCall[]): void } {
  const list = h('ol', { class: 'calls', id: 'tool-calls' });
  const empty = notice('empty', 'No tool calls yet.');
  const element = h(
    'div',
    {},
    h('p', { class: 'muted' }, `Inputs and outputs as the run's log holds them, each cut at ${SHOWN_CHARS} characters.`),
    empty,
    list,
  );
  const drawn = new Map<string, { key: string; item: HTMLLIElement }>();
  /** What the API answered to this console's answers, kept across redraws of their calls. */
  const answers = new Map<string, string>();
  let latest: ToolCall[] = [];

  const update = (calls: ToolCall[]): void => {
    latest = calls;
    empty.hidden = calls.length > 0;
    for (const call of calls) {
      const key = `${call.state.kind}|${answers.get(call.callId) ?? ''}`;
      const seen = drawn.get(call.callId);
      if (seen?.key === key) continue;
      const item = callItem(call, answers.get(call.callId), (answer) => {
        answers.set(call.callId, answer);
        update(latest);
      });
      if (seen) seen.item.replaceWith(item);
      else list.append(item);
      drawn.set(call.callId, { key, item });
    }
  };

  const callItem = (call: ToolCall, answer: string | undefined, answered: (answer: string) => void): HTMLLIElement =>
    h(
      'li',
      { class: 'call', 'data-call': call.callId, 'data-state': call.state.kind },
      h(
        'div',
        { class: 'call-head' },
        h('span', { class: 'call-tool label-fit mono', title: call.tool }, call.tool),
        h('span', { class: 'muted' }, call.answeredBy === 'platform' ? 'client, answered by the platform' : call.source),
        h('span', { class: `call-state call-${call.state.kind}` }, stateLine(call.state)),
      ),
      h('div', { class: 'call-io' }, io('Input', call.input, 'call-input'), outcome(call.state)),
      answer ? h('p', { class: 'call-answer', role: 'status' }, answer) : null,
      call.state.kind === 'platform' ? platformAnswerForm(sid, runId, call.callId, signal, answered) : null,
    );

  return { element, update };
}

function stateLine(state: CallState): string {
  switch (state.kind) {
    case 'open':
      return 'in flight';
    case 'platform':
      return 'waiting for the platform';
    case 'ok':
      return `ok${state.durationMs === null ? '' : ` in ${duration(state.durationMs)}`}`;
    case 'error':
      return `error${state.durationMs === null ? '' : ` after ${duration(state.durationMs)}`}`;
  }
}

function outcome(state: CallState): HTMLElement {
  switch (state.kind) {
    case 'open':
      return io('Output', null, 'call-output', 'none yet: the call is in flight');
    case 'platform':
      return io('Output', null, 'call-output', 'none yet: the platform has not answered');
    case 'ok':
      return io('Output', state.value, 'call-output');
    case 'error':
      return io('Error', null, 'call-output', state.message === null ? NOT_KEPT : bounded(state.message), state.message !== null);
  }
}

/** One side of a call: its recorded JSON (bounded), or a line saying why there is none. */
function io(name: string, recorded: Recorded | null, id: string, instead?: string, asCode = false): HTMLElement {
  let body: HTMLElement;
  if (recorded?.kept) body = h('pre', { class: `code ${id}` }, bounded(json(recorded.value)));
  else if (recorded) body = h('p', { class: `muted ${id}` }, `${NOT_KEPT}${recorded.bytes === null ? '' : `; ${recorded.bytes} bytes`}`);
  else body = h(asCode ? 'pre' : 'p', { class: asCode ? `code ${id}` : `muted ${id}` }, instead ?? '');
  return h('div', { class: 'call-side' }, h('h3', {}, name), body);
}
