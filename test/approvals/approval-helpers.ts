import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApprovalView, CodeModeResult, Event } from '@codemode/contracts';
import type { CodeModeClient } from '@codemode/client';

export const OPERATOR_KEY = 'approvals-operator-key';
export const AGENT_KEY = 'approvals-agent-key';
export const TENANT = 'acme';
/** One operator key in `key:tenant` form, one agent key (SPEC §11). */
export const API_KEYS = `${OPERATOR_KEY}:${TENANT},${AGENT_KEY}:${TENANT}:agent`;
export const APPROVAL_ID = /^ap_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function putJson(client: CodeModeClient, method: string, path: string, body: unknown) {
  return client.raw(method, path, { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
}

/** Waits until the session lists `count` pending approvals and answers them. */
export async function pendingApprovals(client: CodeModeClient, sid: string, count = 1): Promise<ApprovalView[]> {
  for (let i = 0; i < 200; i += 1) {
    const res = await client.raw('GET', `/v1/sessions/${sid}/approvals`);
    const approvals = res.status === 200 ? (res.body as { approvals: ApprovalView[] }).approvals : [];
    if (approvals.length >= count) return approvals;
    await sleep(50);
  }
  throw new Error(`session ${sid} did not list ${count} pending approval(s)`);
}

export async function decide(client: CodeModeClient, sid: string, approvalId: string, body: unknown) {
  return putJson(client, 'POST', `/v1/sessions/${sid}/approvals/${approvalId}`, body);
}

export async function eventsOf(client: CodeModeClient, sid: string): Promise<Event[]> {
  return (await client.events(sid, { limit: 1000 })).events;
}

/** The value of one sample of a worker's /metrics (0 when absent). */
export async function metric(url: string, series: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

export function expectStatus<S extends CodeModeResult['status']>(
  result: CodeModeResult,
  status: S,
): Extract<CodeModeResult, { status: S }> {
  if (result.status !== status) throw new Error(`expected ${status}, got ${JSON.stringify(result)}`);
  return result as Extract<CodeModeResult, { status: S }>;
}

/** A loopback HTTP server that records every request and answers `answer`. */
export class RecordingServer {
  readonly requests: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  private constructor(private readonly server: Server) {}

  static async start(answer: (body: string) => unknown = () => ({ ok: true })): Promise<RecordingServer> {
    const server = createServer();
    const recording = new RecordingServer(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        recording.requests.push({ url: req.url ?? '', headers: req.headers, body });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(answer(body)));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return recording;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
