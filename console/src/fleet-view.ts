import type { FleetRun, FleetView, FleetWorker, NodeView } from '@codemode/contracts';
import { api } from './api.js';
import { fill, h, notice } from './elements.js';
import { ago, clock, duration } from './format.js';
import { every, fact, runHref, showFailure, statusBadge, table, type ViewContext } from './view-context.js';

const REFRESH_MS = 2000;

/** `#/fleet`: live workers and their capacity, the cell queue where the API shows it, and this tenant's live runs on each worker. */
export function renderFleet(ctx: ViewContext): void {
  const body = h('div', { 'aria-live': 'polite' });
  fill(
    ctx.root,
    h(
      'div',
      { class: 'view-head' },
      h('h1', {}, 'Fleet'),
      h('p', { class: 'muted' }, 'Refreshed every 2 s. Runs shown are this tenant’s only.'),
    ),
    body,
  );
  every(REFRESH_MS, ctx.signal, async () => {
    try {
      const fleet = await api<FleetView>('GET', '/v1/fleet', undefined, ctx.signal);
      fill(body, fleetFacts(fleet), workersPart(fleet.workers, fleet.queue !== null), nodesPart(fleet.nodes), unheldPart(fleet.unheld));
    } catch (error) {
      showFailure(ctx, body, error, 'the fleet');
    }
  });
}

/** Capacity always; the shared queue only when the API shows occupancy (single-tenant mode). */
function fleetFacts(fleet: FleetView): HTMLElement {
  const q = fleet.queue;
  return h(
    'div',
    { class: 'facts' },
    fact('Workers alive', fleet.workers.length),
    fact('Sandbox threads', fleet.capacity.threads),
    fact('Cell slots', fleet.capacity.cellSlots),
    q ? fact('Cells waiting', q.waiting) : null,
    q ? fact('Cells running', q.active) : null,
    q ? fact('Oldest waiting cell', q.oldestWaitingAt ? ago(q.oldestWaitingAt) : 'none') : null,
  );
}

/** `occupancy`: busy threads and every tenant's parked runs are shown (single-tenant mode only). */
function workersPart(workers: FleetWorker[], occupancy: boolean): HTMLElement {
  if (workers.length === 0) {
    return notice(
      'error',
      'No worker is alive.',
      h('span', {}, 'Cells queue up until one starts: run ', h('code', {}, 'npm run start:worker'), ' or check the workers’ logs.'),
    );
  }
  const threads = (w: FleetWorker): string =>
    w.report ? (w.report.busyThreads === undefined ? String(w.report.threads) : `${w.report.busyThreads} / ${w.report.threads}`) : '—';
  return h(
    'section',
    { 'aria-labelledby': 'workers-title' },
    h('h2', { id: 'workers-title' }, 'Workers'),
    table(
      'Workers',
      [
        'Worker',
        'Started',
        'Lease renewed',
        occupancy ? 'Busy threads' : 'Threads',
        ...(occupancy ? ['Parked (all tenants)'] : []),
        'Your running runs',
        'Your parked runs',
      ],
      workers.map((w) =>
        h(
          'tr',
          { 'data-worker': w.workerId },
          h('td', { class: 'mono' }, w.workerId),
          h('td', { title: clock(w.report?.startedAt) }, w.report ? ago(w.report.startedAt) : '—'),
          h('td', { class: 'num' }, `${duration(w.leaseAgeMs)} ago`),
          h('td', { class: 'num' }, threads(w)),
          occupancy ? h('td', { class: 'num' }, w.report?.parkedRuns ?? '—') : null,
          h('td', {}, runLinks(w.runs.running)),
          h('td', {}, runLinks(w.runs.parked)),
        ),
      ),
    ),
  );
}

/** The tenant's paired nodes (SPEC §15); how to pair one when there is none. */
function nodesPart(nodes: NodeView[]): HTMLElement {
  const head = h('h2', { id: 'nodes-title' }, 'Nodes');
  if (nodes.length === 0) {
    return h(
      'section',
      { 'aria-labelledby': 'nodes-title' },
      head,
      h(
        'p',
        { class: 'muted' },
        'No node is paired. Pair one with ',
        h('code', {}, 'codemode node --name <name>'),
        ' (see docs/nodes.md).',
      ),
    );
  }
  return h(
    'section',
    { 'aria-labelledby': 'nodes-title' },
    head,
    table(
      'Nodes',
      ['Node', 'Id', 'Platform', 'Connection', 'Last seen', 'Commands'],
      nodes.map((n) =>
        h(
          'tr',
          { 'data-node': n.id },
          h('td', {}, n.name),
          h('td', { class: 'mono' }, n.id),
          h('td', {}, n.platform),
          h('td', {}, n.connected ? statusBadge('connected') : h('span', { class: 'muted' }, 'disconnected')),
          h('td', { title: clock(n.lastSeenAt) }, ago(n.lastSeenAt)),
          h('td', { class: 'mono' }, n.commands.join(', ')),
        ),
      ),
    ),
  );
}

function unheldPart(runs: FleetRun[]): HTMLElement | null {
  if (runs.length === 0) return null;
  return h(
    'section',
    {},
    h('h2', {}, 'Your live runs no live worker holds'),
    h(
      'p',
      { class: 'muted' },
      'Released for replay, or their worker is gone: the next wait rebuilds a replay-safe run; others end as lost or expired.',
    ),
    runLinks(runs),
  );
}

function runLinks(runs: FleetRun[]): HTMLElement {
  if (runs.length === 0) return h('span', { class: 'muted' }, 'none');
  return h(
    'ul',
    { class: 'plain' },
    runs.map((r) =>
      h(
        'li',
        {},
        statusBadge(r.status),
        ' ',
        h('a', { href: runHref(r.sessionId, r.runId) }, r.title || r.runId),
        h('span', { class: 'muted' }, ` in ${r.sessionId}`),
      ),
    ),
  );
}
