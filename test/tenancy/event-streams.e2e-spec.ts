import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from '../utils/test-stack';
import { twoTenantProbe, victimHarm, type VictimReport } from '../utils/two-tenant-probe';

/**
 * SPEC §10 "Fate isolation", event streams: a tenant with a large session history opens its quota
 * of event streams and never reads them. The API holds a bounded amount per stream (it stops
 * reading the log while a socket is not writable), disconnects each stream once its consumer has
 * stayed behind for the lag limit, and keeps serving the other tenant; a disconnected consumer
 * resumes with `Last-Event-ID` and gets every event, in order, exactly once.
 */
jest.setTimeout(600_000);

const run = randomBytes(4).toString('hex');
const keys = { alpha: `sa-${run}`, beta: `sb-${run}` };
const MIB = 1024 * 1024;
/** The attacker's history: this many execs of 1 MiB of code each (the run.requested events hold the code). */
const LARGE_EXECS = 96;
const STREAMS = 8;
const LAG_MS = 4000;

let stack: TestStack;
let alpha: CodeModeClient;
let beta: CodeModeClient;

beforeAll(async () => {
  stack = await TestStack.start({
    apiKeys: `${keys.alpha}:alpha,${keys.beta}:beta`,
    env: {
      CODEMODE_TENANT_MAX_STREAMS: String(STREAMS),
      CODEMODE_STREAM_MAX_LAG_MS: String(LAG_MS),
      CODEMODE_TENANT_RATE: '1000',
      CODEMODE_TENANT_BURST: '1000',
    },
  });
  alpha = stack.client(keys.alpha);
  beta = stack.client(keys.beta);
});

afterAll(async () => {
  await stack?.stop();
});

/** Resident memory of a process in bytes, from /proc. */
function rssOf(pid: number): number {
  const line = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!line) throw new Error(`no VmRSS for ${pid}`);
  return Number(line[1]) * 1024;
}

interface OpenStream {
  req: ClientRequest;
  res: IncomingMessage;
  /** Settles when the response closes; while it is paused, only once it is read again (a reset connection drops what was unread). */
  closed: Promise<void>;
}

/** Opens alpha's stream of `sid`; resolves with the response once its head arrived. */
function openStream(sid: string, lastEventId?: string): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${stack.baseUrl}/v1/sessions/${sid}/events`,
      {
        headers: {
          authorization: `Bearer ${keys.alpha}`,
          accept: 'text/event-stream',
          ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
        },
      },
      (res) => {
        // A server that cut the connection ends the response as aborted.
        res.on('error', () => undefined);
        resolve({ req, res, closed: new Promise((settle) => res.once('close', () => settle())) });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The ids of the complete SSE frames in `text` (a frame cut by a disconnect is not one). */
function frameIds(text: string): string[] {
  const complete = text.slice(0, text.lastIndexOf('\n\n') + 2);
  return [...complete.matchAll(/^id: (\S+)$/gm)].map((m) => m[1]);
}

/** Reads a stream until the server closes it; resolves with what arrived. */
async function readToClose({ res, closed }: OpenStream): Promise<string> {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.resume();
  await closed;
  await new Promise((r) => setImmediate(r));
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads a stream until a frame with `lastId` arrived, then closes it. */
function readUntil({ req, res, closed }: OpenStream, lastId: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let tail = '';
    const marker = `id: ${lastId}\n`;
    res.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // The last event is a small run.completed: a short tail finds its whole frame.
      tail = (tail + chunk.toString('utf8')).slice(-256 * 1024);
      const at = tail.indexOf(marker);
      if (at >= 0 && tail.indexOf('\n\n', at) >= 0) {
        resolve(Buffer.concat(chunks).toString('utf8'));
        req.destroy();
      }
    });
    void closed.then(() => reject(new Error(`stream closed before ${lastId}`)));
  });
}

async function allEventIds(sid: string): Promise<string[]> {
  const ids: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await alpha.events(sid, { after, limit: 1000 });
    ids.push(...page.events.map((e) => e.id));
    if (!page.next) return ids;
    after = page.next;
  }
}

test('unread streams of a large history stay bounded, lag out, and resume with Last-Event-ID without gaps', async () => {
  const sid = `history-${run}`;
  const filler = `// ${'x'.repeat(MIB - 64)}\n`;
  for (let i = 0; i < LARGE_EXECS; i += 4) {
    const batch = [0, 1, 2, 3].map((j) => alpha.exec(sid, { title: 'large', code: `${filler}return ${i + j}` }));
    for (const result of await Promise.all(batch)) expect(result).toMatchObject({ status: 'completed' });
  }
  expect(await beta.exec('b', { title: 'warm', code: 'return 1' })).toMatchObject({ status: 'completed', value: 1 });
  const ids = await allEventIds(sid);
  const lastId = ids[ids.length - 1];
  const baseline = rssOf(stack.api.pid);

  // The attacker's quota of streams, none ever read: each response is paused at its head.
  const opened = Date.now();
  const streams: OpenStream[] = [];
  for (let i = 0; i < STREAMS; i += 1) {
    const stream = await openStream(sid);
    expect(stream.res.statusCode).toBe(200);
    stream.res.pause();
    streams.push(stream);
  }
  const ninth = await openStream(sid);
  expect(ninth.res.statusCode).toBe(429);
  ninth.req.destroy();

  // While they are held, and until they lag out, the victim is served and the API's memory stays bounded.
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(stack.api.pid))), 100);
  let victim: VictimReport;
  try {
    // The attack goes on until the streams lagged out: until a stream of alpha's opens again.
    ({ victim } = await twoTenantProbe(stack, { client: beta, sessionId: 'b' }, async () => {
      for (;;) {
        const probe = await openStream(sid, lastId);
        probe.req.destroy();
        if (probe.res.statusCode === 200) return;
        if (Date.now() - opened > LAG_MS + 20_000) throw new Error('the unread streams did not lag out');
        await new Promise((r) => setTimeout(r, 200));
      }
    }));
  } finally {
    clearInterval(sampler);
  }
  expect(victimHarm(victim, { maxP99Ms: 5000 })).toEqual([]);
  // Every slot came back only once the consumers had lagged for the limit.
  expect(Date.now() - opened).toBeGreaterThanOrEqual(LAG_MS);
  expect(peak - baseline).toBeLessThan(256 * MIB);
  expect(peak).toBeLessThan(1024 * MIB);
  expect(stack.api.alive).toBe(true);

  // A lagged consumer got part of the history, then resumes after its last complete frame. A paused
  // client stopped reading its socket, so it learns the server cut it only once it reads again:
  // every stream is read, and the first to close is one the server cut (one it did not cut catches
  // up once read and stays open). Streams lag out in the order their sockets filled, not opened.
  const first = await Promise.race(streams.map((stream) => readToClose(stream)));
  for (const stream of streams) stream.req.destroy();
  const got = frameIds(first);
  expect(got.length).toBeLessThan(ids.length);
  // Without a complete frame (a reset connection drops what was unread) it starts over, as an EventSource would.
  const rest = frameIds(await readUntil(await openStream(sid, got.at(-1)), lastId));
  expect([...got, ...rest]).toEqual(ids);
});
