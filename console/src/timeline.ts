import type { Event } from '@codemode/contracts';
import { h, s } from './elements.js';
import { duration, text } from './format.js';

/** A span of the run on the timeline: a leg (executing), a park, or a tool call. */
interface Span {
  kind: 'leg' | 'park' | 'tool';
  label: string;
  start: number;
  /** null while it is still open. */
  end: number | null;
  /** `platform`: called as answered only by the platform, and not answered yet. */
  outcome?: 'ok' | 'error' | 'open' | 'platform';
}

const OUTCOME_NOTES: Record<NonNullable<Span['outcome']>, string> = {
  ok: 'ok',
  error: 'error',
  open: 'in flight',
  platform: 'waiting for the platform',
};

const TERMINAL = new Set(['run.completed', 'run.failed', 'run.expired', 'run.lost']);

/** Legs, parks and tool calls of one run, from its events in log order. */
export function spansOf(events: readonly Event[]): { spans: Span[]; start: number; end: number | null } {
  const spans: Span[] = [];
  const calls = new Map<string, Span>();
  let open: Span | null = null;
  let start = Number.NaN;
  let end: number | null = null;
  const close = (at: number): void => {
    if (open) open.end = at;
    open = null;
  };
  for (const event of events) {
    const at = Date.parse(event.at);
    if (Number.isNaN(start)) start = at;
    const d = event.data;
    if (event.type === 'run.started' || event.type === 'run.resumed' || event.type === 'run.recovered') {
      close(at);
      open = { kind: 'leg', label: event.type === 'run.started' ? 'executing' : 'resumed', start: at, end: null };
      spans.push(open);
    } else if (event.type === 'run.parked' || event.type === 'run.released') {
      close(at);
      open = { kind: 'park', label: event.type === 'run.parked' ? 'parked' : 'released', start: at, end: null };
      spans.push(open);
    } else if (event.type === 'tool.called') {
      const outcome = d.answeredBy === 'platform' ? 'platform' : 'open';
      const call: Span = { kind: 'tool', label: text(d.tool, 'tool'), start: at, end: null, outcome };
      calls.set(String(d.callId), call);
      spans.push(call);
    } else if (event.type === 'tool.settled') {
      const call = calls.get(String(d.callId));
      if (call) {
        call.end = typeof d.durationMs === 'number' ? call.start + d.durationMs : at;
        call.outcome = d.ok ? 'ok' : 'error';
      }
    } else if (TERMINAL.has(event.type)) {
      close(at);
      end = at;
    }
  }
  return { spans, start: Number.isNaN(start) ? Date.now() : start, end };
}

const WIDTH = 960;
const LABEL = 150;
const ROW = 26;
const AXIS = 28;
/** Tool calls drawn, the latest ones: a run with thousands would make a picture nobody can read and a slow tab. */
const MAX_TOOL_ROWS = 200;

/**
 * The run as a picture: one lane for its legs and parks, one row per tool call, each bar as long
 * as it lasted, labelled with its duration and outcome (colour is never the only signal).
 */
export function timelineSvg(events: readonly Event[], now = Date.now()): Element {
  const { spans, start, end } = spansOf(events);
  const stop = end ?? now;
  const total = Math.max(1, stop - start);
  const x = (t: number): number => LABEL + ((t - start) / total) * (WIDTH - LABEL - 20);
  const lanes = spans.filter((sp) => sp.kind !== 'tool');
  const tools = spans.filter((sp) => sp.kind === 'tool');
  const drawn = tools.slice(-MAX_TOOL_ROWS);
  const height = AXIS + ROW * (1 + drawn.length) + 10;
  const bar = (sp: Span, y: number): Element => {
    const x0 = x(sp.start);
    const w = Math.max(2, x(sp.end ?? stop) - x0);
    const took = duration((sp.end ?? stop) - sp.start);
    const note = sp.kind === 'tool' ? `${took} ${OUTCOME_NOTES[sp.outcome ?? 'open']}` : `${sp.label} ${took}`;
    return s(
      'g',
      { class: `tl-${sp.kind} tl-${sp.outcome ?? sp.label}` },
      s('title', {}, `${sp.label}: ${note}`),
      s('rect', { x: x0, y: y + 4, width: w, height: ROW - 8, rx: 3 }),
      noteText(note, x0, w, y + ROW / 2 + 4),
    );
  };
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) =>
    s(
      'g',
      { class: 'tl-tick' },
      s('line', { x1: x(start + f * total), x2: x(start + f * total), y1: AXIS - 6, y2: height }),
      s(
        'text',
        { x: x(start + f * total), y: AXIS - 10, 'text-anchor': f === 0 ? 'start' : f === 1 ? 'end' : 'middle' },
        `+${duration(f * total)}`,
      ),
    ),
  );
  const svg = s(
    'svg',
    { viewBox: `0 0 ${WIDTH} ${height}`, role: 'img', 'aria-labelledby': 'timeline-title', class: 'timeline', id: 'run-timeline' },
    s(
      'title',
      { id: 'timeline-title' },
      `Run timeline: ${lanes.length} legs and parks, ${tools.length} tool calls, ${duration(total)}${end ? '' : ' so far'}`,
    ),
    ticks,
    label('run', AXIS),
    lanes.map((sp) => bar(sp, AXIS)),
    drawn.map((sp, i) => [label(sp.label, AXIS + ROW * (i + 1)), bar(sp, AXIS + ROW * (i + 1))]),
  );
  return h(
    'figure',
    { class: 'timeline-figure' },
    svg,
    h(
      'figcaption',
      { class: 'legend' },
      legend('leg', 'executing'),
      legend('park', 'parked'),
      legend('ok', 'tool ok'),
      legend('error', 'tool error'),
      legend('open', 'in flight'),
      legend('platform', 'waiting for the platform'),
      tools.length > drawn.length ? h('span', {}, `the latest ${drawn.length} of ${tools.length} tool calls drawn`) : null,
    ),
  );
}

/** About how wide a note is, in the picture's units (12px monospace). */
const NOTE_CHAR = 7.5;

/**
 * A bar's note: after the bar, else inside it at its end, else none (the bar's tooltip still says
 * it), so notes never run out of the picture or over each other's bars.
 */
function noteText(note: string, x0: number, w: number, y: number): Element | null {
  const width = note.length * NOTE_CHAR;
  if (x0 + w + 4 + width <= WIDTH - 4) return s('text', { x: x0 + w + 4, y, class: 'tl-note' }, note);
  if (width + 8 <= w) return s('text', { x: x0 + w - 4, y, class: 'tl-note tl-note-in', 'text-anchor': 'end' }, note);
  return null;
}

/**
 * A row's label: HTML in the picture, so a long tool name ends in an ellipsis inside its column
 * (CSS `.label-fit`) with the whole name as its tooltip, instead of running under the bars.
 */
function label(name: string, y: number): Element {
  return s(
    'foreignObject',
    { x: 4, y: y + 3, width: LABEL - 12, height: ROW - 6 },
    h('div', { class: 'tl-label label-fit', title: name }, name),
  );
}

function legend(kind: string, text: string): HTMLElement {
  return h('span', { class: 'legend-item' }, h('span', { class: `swatch sw-${kind}` }), text);
}
