import type { FleetView, RunList, SessionList } from '@codemode/contracts';
import type { Example } from './example';

/** Examples of the operator listings (`GET /v1/sessions`, `…/runs`, `/v1/fleet`); parsed by the document spec. */
const AT = '2026-01-15T10:00:00.000Z';
const RUN_ID = 'cm_0f8e2a4c-7b1d-4c39-9a52-5e6d7c8b9a01';
const WORKER = 'worker-a-4711-1f2e';

const sessionList: SessionList = {
  sessions: [
    { sessionId: 's1', agentId: 'support-bot', createdAt: AT, updatedAt: '2026-01-15T10:05:00.000Z', runs: { running: 0, parked: 1 } },
    { sessionId: 's0', agentId: null, createdAt: AT, updatedAt: AT, runs: { running: 0, parked: 0 } },
  ],
  next: 'WzE3MzY5MzUyMDAwMDAsInMwIl0',
};

const runList: RunList = {
  runs: [
    {
      runId: RUN_ID,
      sessionId: 's1',
      title: 'open a ticket',
      status: 'waiting',
      restartSafe: false,
      owner: WORKER,
      epoch: 1,
      createdAt: AT,
      startedAt: AT,
      endedAt: null,
      parkedAt: AT,
      expiresAt: '2026-01-15T10:15:00.000Z',
      updatedAt: AT,
      replaySafe: false,
    },
  ],
  next: null,
};

const fleetView: FleetView = {
  workers: [
    {
      workerId: WORKER,
      leaseAgeMs: 1200,
      report: { startedAt: AT, threads: 2, cellSlots: 16, parkedSlots: 64 },
      runs: { running: [], parked: [{ sessionId: 's1', runId: RUN_ID, title: 'open a ticket', status: 'waiting' }] },
    },
  ],
  capacity: { workers: 1, threads: 2, cellSlots: 16, parkedSlots: 64 },
  queue: null,
  unheld: [],
  nodes: [
    {
      id: 'nd_5b1f0c9e-2a47-4d8e-9c61-0f3e8b2d7a14',
      name: 'lab-mac',
      platform: 'darwin',
      connected: true,
      commands: ['device.status', 'fs.listDir'],
      connectedAt: AT,
      lastSeenAt: AT,
    },
  ],
};

export const CONSOLE_EXAMPLES = {
  SessionList: { page: { summary: 'Newest activity first, with a next page', value: sessionList } },
  RunList: { page: { summary: 'A parked run', value: runList } },
  FleetView: { fleet: { summary: 'Multi-tenant mode: one worker holding one of your parked runs', value: fleetView } },
} satisfies Record<string, Record<string, Example>>;
