import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { request, type ClientRequest } from 'node:http';
import { TestStack } from '../utils/test-stack';

/**
 * SPEC §10 "API", adversarially: the key is checked before a byte of the body is read, whatever
 * the form of the request target; keys are compared in constant time; bodies over their route's
 * cap are refused without being buffered whole. Requests go over raw sockets: `fetch` would
 * normalize the odd targets and could not show when the answer arrived. After every test, the
 * tenant's ordinary cell still completes.
 */

jest.setTimeout(30_000);

const MIB = 1024 * 1024;
const KEY = 'k1';
const UNAUTHORIZED = { error: 'missing or unknown API key; send Authorization: Bearer <key>.', code: 'unauthorized' };
const CELL = Buffer.from(JSON.stringify({ title: 'probe', code: 'return 1+1' }));

interface RawRequest {
  method: string;
  /** The request target, sent byte for byte. */
  target: string;
  key?: string;
  body?: Buffer;
  chunked?: boolean;
  /**
   * Body bytes to send before waiting for the answer; the rest is sent once it came (or not at all
   * if the server closed the connection). An answer that comes proves the server did not wait for
   * the rest of the body. Default: the whole body.
   */
  answerAfter?: number;
  /** Sends `Expect: 100-continue` and the body only after a `100 Continue`. */
  expectContinue?: boolean;
}

interface RawReply {
  status: number;
  body: unknown;
  /** Body bytes written when the answer was complete. */
  writtenWhenAnswered: number;
  /** Body bytes written in all: fewer than the body's when the server closed the connection. */
  written: number;
  /** Whether a `100 Continue` came before the answer. */
  continued: boolean;
}

/** Body bytes one write carries. */
const WRITE_BYTES = 64 * 1024;

/**
 * One request over its own keep-alive connection, written in 64 KiB pieces (chunk-encoded when
 * `chunked`). Resolves once the answer is complete and the body is written or the server closed
 * the connection; rejects after 10 s without an answer (e.g. a server that waits for the body).
 */
function exchange(port: number, req: RawRequest): Promise<RawReply> {
  const body = req.body ?? Buffer.alloc(0);
  const head = [`${req.method} ${req.target} HTTP/1.1`, `host: 127.0.0.1:${port}`, 'content-type: application/json'];
  if (req.key !== undefined) head.push(`authorization: Bearer ${req.key}`);
  head.push(req.chunked ? 'transfer-encoding: chunked' : `content-length: ${body.length}`);
  if (req.expectContinue) head.push('expect: 100-continue');
  const answerAfter = req.answerAfter ?? body.length;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let reply: { status: number; body: unknown } | null = null;
    let written = 0;
    let writtenWhenAnswered = -1;
    let writerDone = false;
    let closed = false;
    let continued = false;
    let heard = (): void => undefined;
    const whenHeard = new Promise<void>((done) => (heard = done));
    const whenClosed = new Promise<boolean>((done) => socket.once('close', () => done(false)));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`${req.method} ${req.target}: no complete answer within 10 s: ${received.toString('latin1').slice(0, 300)}`));
    }, 10_000);
    const settle = (): void => {
      if (reply === null || !(writerDone || closed)) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...reply, written, writtenWhenAnswered, continued });
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const interim = /^HTTP\/1\.1 100 [^\r]*\r\n\r\n/.exec(received.toString('latin1'));
      if (interim) {
        received = received.subarray(interim[0].length);
        continued = true;
      }
      reply ??= parseReply(received);
      if (reply !== null && writtenWhenAnswered < 0) writtenWhenAnswered = written;
      if (continued || reply !== null) heard();
      settle();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      if (reply !== null) settle();
      else {
        clearTimeout(timer);
        reject(new Error(`${req.method} ${req.target}: connection closed without an answer: ${received.toString('latin1').slice(0, 300)}`));
      }
    });
    const write = (data: Buffer): Promise<boolean> =>
      closed || socket.destroyed
        ? Promise.resolve(false)
        : Promise.race([new Promise<boolean>((done) => socket.write(data, (error) => done(!error))), whenClosed]);
    const frame = (piece: Buffer): Buffer =>
      req.chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
    const writeBody = async (): Promise<void> => {
      if (!(await write(Buffer.from(`${head.join('\r\n')}\r\n\r\n`)))) return;
      if (req.expectContinue) {
        await Promise.race([whenHeard, whenClosed]);
        if (!continued) return;
      }
      for (let at = 0; at < body.length; at += WRITE_BYTES) {
        if (at >= answerAfter) await Promise.race([whenHeard, whenClosed]);
        if (!(await write(frame(body.subarray(at, at + WRITE_BYTES))))) return;
        written += Math.min(WRITE_BYTES, body.length - at);
      }
      if (req.chunked) await write(Buffer.from('0\r\n\r\n'));
    };
    void writeBody().then(() => {
      writerDone = true;
      settle();
    });
  });
}

/** Status and JSON body of a complete `Content-Length` answer; null while incomplete. */
function parseReply(data: Buffer): { status: number; body: unknown } | null {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const head = data.subarray(0, end).toString('latin1');
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (!length) throw new Error(`answer without content-length: ${head}`);
  const text = data.subarray(end + 4, end + 4 + Number(length[1]));
  if (text.length < Number(length[1])) return null;
  let body: unknown = text.toString('utf8');
  try {
    body = JSON.parse(body as string);
  } catch {
    // not JSON: keep the text
  }
  return { status: Number(head.split(' ')[1]), body };
}

const failedInput = (error: string) => ({ status: 'failed', code: 'invalid_input', failurePhase: 'input', error });
const tooLarge = (mib: number) => ({ error: `request body exceeds ${mib} MiB.`, code: 'invalid_input' });

describe('API hardening: authentication first, constant-time keys, body caps (SPEC §10 "API")', () => {
  let stack: TestStack;
  let port: number;

  beforeAll(async () => {
    stack = await TestStack.start({ apiKeys: `${KEY}:alpha,k2:beta` });
    port = Number(new URL(stack.baseUrl).port);
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
  });

  afterEach(async () => {
    // Nothing was lost: the tenant's ordinary cell still completes.
    const result = await stack.client(KEY).exec('s-after', { title: 'after', code: 'return 1+1' });
    expect(result).toMatchObject({ status: 'completed', value: 2 });
  });

  describe('authentication before the body', () => {
    it.each([
      ['a declared 20 MB body', false],
      ['a chunked 20 MB body', true],
    ])('answers %s without a key 401 before reading it, then closes the connection', async (_, chunked) => {
      const body = Buffer.alloc(20 * 1000 * 1000, 0x20);
      const reply = await exchange(port, { method: 'POST', target: '/v1/sessions/s-big/exec', body, chunked, answerAfter: WRITE_BYTES });
      expect(reply).toMatchObject({ status: 401, body: UNAUTHORIZED, writtenWhenAnswered: WRITE_BYTES });
      // The server closed the connection instead of reading on.
      expect(reply.written).toBeLessThan(body.length);
    });

    it.each([
      ['absolute-form', (p: number) => `http://127.0.0.1:${p}/v1/sessions/s-form/exec`, 200],
      ['absolute-form, upper case', (p: number) => `HTTP://127.0.0.1:${p}/V1/sessions/s-form/exec`, 200],
      ['upper-case prefix', () => '/V1/sessions/s-form/exec', 200],
      ['trailing slash', () => '/v1/sessions/s-form/exec/', 200],
      ['double slash', () => '//v1/sessions/s-form/exec', 404],
      ['percent-encoded prefix', () => '/%761/sessions/s-form/exec', 404],
      ['matrix parameter', () => '/v1;x/sessions/s-form/exec', 404],
      ['dot segment', () => '/./v1/sessions/s-form/exec', 404],
      ['dot-dot segment', () => '/x/../v1/sessions/s-form/exec', 404],
      ['backslash', () => '/v1\\sessions\\s-form\\exec', 404],
    ])('refuses the %s target without a valid key; with one it behaves as usual', async (_, target, withKey) => {
      for (const key of [undefined, 'k3']) {
        const refused = await exchange(port, { method: 'POST', target: target(port), key, body: CELL });
        expect([key, refused.status, refused.body]).toEqual([key, 401, UNAUTHORIZED]);
      }
      const served = await exchange(port, { method: 'POST', target: target(port), key: KEY, body: CELL });
      expect(served.status).toBe(withKey);
      if (withKey === 200) expect(served.body).toMatchObject({ status: 'completed', value: 2 });
    });

    it('answers `Expect: 100-continue` without a key 401 before asking for the body', async () => {
      const refused = await exchange(port, { method: 'POST', target: '/v1/sessions/s-continue/exec', body: CELL, expectContinue: true });
      expect(refused).toMatchObject({ status: 401, body: UNAUTHORIZED, continued: false, written: 0 });
      const served = await exchange(port, {
        method: 'POST',
        target: '/v1/sessions/s-continue/exec',
        key: KEY,
        body: CELL,
        expectContinue: true,
      });
      expect(served).toMatchObject({ status: 200, body: { status: 'completed', value: 2 }, continued: true });
      const tooLarge = await exchange(port, {
        method: 'PUT',
        target: '/v1/sessions/s-continue',
        key: KEY,
        body: Buffer.alloc(MIB + 1),
        expectContinue: true,
      });
      expect(tooLarge).toMatchObject({ status: 413, continued: false, written: 0 });
    });

    it('refuses reads in every form too, and keeps the operational routes at the root open', async () => {
      for (const target of [`http://127.0.0.1:${port}/v1/sessions/s-after`, '/V1/sessions/s-after/store', '//v1/sessions/s-after']) {
        const refused = await exchange(port, { method: 'GET', target });
        expect([target, refused.status, refused.body]).toEqual([target, 401, UNAUTHORIZED]);
      }
      for (const target of [
        '/health/live',
        '/health/ready',
        '/openapi.json',
        '/docs',
        '/HEALTH/live',
        `http://127.0.0.1:${port}/health/live`,
      ]) {
        expect([target, (await exchange(port, { method: 'GET', target })).status]).toEqual([target, 200]);
      }
      expect((await exchange(port, { method: 'GET', target: '/no/such/route' })).status).toBe(404);
      // SPEC §10: a multi-tenant API serves /metrics on API_METRICS_PORT, not here.
      expect((await exchange(port, { method: 'GET', target: '/metrics' })).status).toBe(404);
    });

    it('refuses a wrong key of the right length, other schemes and empty keys, and maps each key to its tenant', async () => {
      for (const authorization of ['Bearer k3', 'Bearer K1', 'Bearer k', 'Bearer k1k', 'Basic k1', 'Bearer ', 'k1']) {
        const res = await stack.client().raw('POST', '/v1/sessions/s-keys/exec', { body: CELL.toString(), headers: { authorization } });
        expect([authorization, res.status, res.body]).toEqual([authorization, 401, UNAUTHORIZED]);
      }
      await stack.client(KEY).exec('s-keys', { title: 'alpha', code: 'return 1' });
      expect((await stack.client(KEY).raw('GET', '/v1/sessions/s-keys')).status).toBe(200);
      expect((await stack.client('k2').raw('GET', '/v1/sessions/s-keys')).status).toBe(404);
    });
  });

  describe('body caps', () => {
    const send = (
      method: string,
      target: string,
      body: Buffer,
      opts: { chunked?: boolean; answerAfter?: number } = {},
    ): Promise<RawReply> => exchange(port, { method, target, key: KEY, body, ...opts });

    it('answers an exec body declared over 16 MiB with a failed result before reading it, then drains it', async () => {
      const body = Buffer.alloc(16 * MIB + 1, 0x78);
      const reply = await send('POST', '/v1/sessions/s-caps/exec', body, { answerAfter: 0 });
      expect(reply).toMatchObject({
        status: 200,
        body: failedInput('request body exceeds 16 MiB.'),
        writtenWhenAnswered: 0,
        written: body.length,
      });
    });

    it('answers a wait body declared over 1 MiB with a failed result before reading it', async () => {
      const reply = await send('POST', '/v1/sessions/s-caps/wait', Buffer.alloc(MIB + 1, 0x78), { answerAfter: 0 });
      expect(reply).toMatchObject({ status: 200, body: failedInput('request body exceeds 1 MiB.'), writtenWhenAnswered: 0 });
    });

    it('answers a session PUT declared over 1 MiB with 413 before reading it', async () => {
      const reply = await send('PUT', '/v1/sessions/s-caps', Buffer.alloc(MIB + 1, 0x78), { answerAfter: 0 });
      expect(reply).toMatchObject({ status: 413, body: tooLarge(1), writtenWhenAnswered: 0 });
    });

    it('counts chunked bodies as they stream and refuses them once past the cap', async () => {
      const past = (mib: number) => mib * MIB + WRITE_BYTES;
      const exec = await send('POST', '/v1/sessions/s-caps/exec', Buffer.alloc(20 * MIB, 0x78), { chunked: true, answerAfter: past(16) });
      expect(exec).toMatchObject({ status: 200, body: failedInput('request body exceeds 16 MiB.') });
      const wait = await send('POST', '/v1/sessions/s-caps/wait', Buffer.alloc(4 * MIB, 0x78), { chunked: true, answerAfter: past(1) });
      expect(wait).toMatchObject({ status: 200, body: failedInput('request body exceeds 1 MiB.') });
      const put = await send('PUT', '/v1/sessions/s-caps', Buffer.alloc(4 * MIB, 0x78), { chunked: true, answerAfter: past(1) });
      expect(put).toMatchObject({ status: 413, body: tooLarge(1) });
      // Under the cap, a chunked body is read as usual.
      const small = await send('POST', '/v1/sessions/s-caps/exec', CELL, { chunked: true });
      expect(small.body).toMatchObject({ status: 'completed', value: 2 });
    });

    it('lets the tools and tool-results routes take 2 MiB', async () => {
      const schema = { type: 'object', description: 'y'.repeat(52 * 1024) };
      const tools = Array.from({ length: 40 }, (_, i) => ({ name: `t${i}`, description: 'd', inputSchema: schema }));
      const put = await send('PUT', '/v1/sessions/s-tools/tools', Buffer.from(JSON.stringify({ tools })));
      expect(put.written).toBeGreaterThan(2 * MIB);
      expect(put.status).toBe(200);
      const results = JSON.stringify({ results: [{ id: 'c1', ok: true, value: 'y'.repeat(2 * MIB) }] });
      const submitted = await send('POST', `/v1/sessions/s-tools/runs/cm_${randomUUID()}/tool-results`, Buffer.from(results));
      // An unknown run, but its body was read: not 413.
      expect([submitted.status, submitted.body]).toEqual([404, expect.objectContaining({ code: 'not_found' })]);
    });
  });

  describe('answers name no framework', () => {
    it("sends no X-Powered-By on exec, Nest routes, refusals, not-found answers and the worker's metrics", async () => {
      const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
      // The exec first: it makes the session whose events are read next.
      const exec = await fetch(`${stack.baseUrl}/v1/sessions/s-header/exec`, { method: 'POST', headers: auth, body: CELL });
      const answers = [
        exec,
        ...(await Promise.all([
          fetch(`${stack.baseUrl}/v1/sessions/s-header/events`, { headers: auth }),
          fetch(`${stack.baseUrl}/v1/nothing-here`, { headers: auth }),
          fetch(`${stack.baseUrl}/v1/sessions/s-header/exec`, { method: 'POST', body: CELL }),
          fetch(`${stack.baseUrl}/health/live`),
          fetch(`${stack.workerUrl(stack.workers[0])}/metrics`),
        ])),
      ];
      expect(answers.map((a) => a.status)).toEqual([200, 200, 404, 401, 200, 200]);
      expect(answers.map((a) => a.headers.get('x-powered-by'))).toEqual([null, null, null, null, null, null]);
      await Promise.all(answers.map((a) => a.arrayBuffer()));
    });
  });

  describe('large bodies per tenant (SPEC §10 "Fate isolation")', () => {
    const toolsBody = (mib: number): Buffer => {
      const schema = { type: 'object', description: 'y'.repeat(50 * 1024) };
      const count = Math.ceil((mib * MIB) / (51 * 1024));
      return Buffer.from(
        JSON.stringify({ tools: Array.from({ length: count }, (_, i) => ({ name: `t${i}`, description: 'd', inputSchema: schema })) }),
      );
    };
    /** A PUT of `body` whose first `sent` bytes are written now; resolves with its status once answered. */
    const put = (key: string, path: string, body: Buffer, sent = body.length): { req: ClientRequest; answered: Promise<number> } => {
      const req = request(`${stack.baseUrl}${path}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': body.length },
      });
      const answered = new Promise<number>((resolve, reject) => {
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
      });
      if (sent >= body.length) req.end(body);
      else req.write(body.subarray(0, sent));
      return { req, answered };
    };

    it("holds a tenant's third large body while it sends two slowly; another tenant's goes on; the third runs once one of the two goes", async () => {
      const slow = toolsBody(3);
      const holders = [0, 1].map((i) => put(KEY, `/v1/sessions/s-slow-${i}/tools`, slow, Math.floor(1.5 * MIB)));
      for (const holder of holders) holder.answered.catch(() => undefined);
      await new Promise((r) => setTimeout(r, 500));
      let thirdStatus: number | null = null;
      const third = put(KEY, '/v1/sessions/s-third/tools', toolsBody(2));
      void third.answered.then((status) => (thirdStatus = status));
      // Another tenant's large body is read and answered while alpha's third waits behind alpha's two.
      expect(await put('k2', '/v1/sessions/s-other/tools', toolsBody(2)).answered).toBe(200);
      await new Promise((r) => setTimeout(r, 500));
      expect(thirdStatus).toBeNull();
      // One of the slow two goes: the third is read and answered.
      holders[0].req.destroy();
      expect(await third.answered).toBe(200);
      holders[1].req.destroy();
    });
  });
});
