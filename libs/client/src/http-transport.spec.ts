import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readText, sendHttp } from './http-transport';

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url === '/stream') {
      // An event stream that never ends on its own.
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      response.setHeader(
        'x-seen',
        `${request.method} ${request.headers['content-length'] ?? '-'} ${String(request.headers['x-key'] ?? '-')}`,
      );
      response.end(`échoed:${Buffer.concat(chunks).toString('utf8')}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

it('sends the method, headers and body (with its byte length) and reads status, headers and UTF-8 text', async () => {
  const answer = await sendHttp(new URL(`${base}/x`), { method: 'POST', headers: { 'x-key': 'k1' }, body: '{"é":1}' });
  expect(answer.status).toBe(200);
  expect(answer.headers.get('x-seen')).toBe('POST 8 k1');
  expect(await readText(answer)).toBe('échoed:{"é":1}');
});

it('rejects with the socket error when nothing listens', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  await expect(sendHttp(new URL(`http://127.0.0.1:${port}/`), { method: 'GET', headers: {} })).rejects.toThrow(
    `connect ECONNREFUSED 127.0.0.1:${port}`,
  );
});

it('rejects with an AbortError when aborted before sending, and while reading a body', async () => {
  const before = new AbortController();
  before.abort();
  await expect(sendHttp(new URL(`${base}/x`), { method: 'GET', headers: {}, signal: before.signal })).rejects.toMatchObject({
    name: 'AbortError',
  });

  const during = new AbortController();
  const answer = await sendHttp(new URL(`${base}/stream`), { method: 'GET', headers: {}, signal: during.signal });
  const chunks: string[] = [];
  const reading = (async () => {
    for await (const chunk of answer.body) {
      chunks.push(Buffer.from(chunk).toString('utf8'));
      during.abort();
    }
  })();
  await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
  expect(chunks).toEqual(['data: first\n\n']);
});
