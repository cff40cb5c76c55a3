import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { responseClosed, untilClosed, watchConnectionClose } from './connection-close';
import type { ApiRequest } from './request-context';

/** A server whose handler awaits `awaitMs` (a quota slot, a pairing) before it looks at the connection. */
function serverThatAwaits(awaitMs: number, seen: (watched: AbortSignal, late: AbortSignal) => void): Promise<Server> {
  const watch = watchConnectionClose();
  const server = createServer((req: ApiRequest, res: ServerResponse) => {
    watch(req, res, () => {
      setTimeout(() => seen(req.connectionClosed!, responseClosed(res)), awaitMs);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Sends a request on a raw socket and closes it at once, as a client that gives up does. */
function sendAndClose(server: Server): void {
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1', () => {
    socket.write('GET /stream HTTP/1.1\r\nhost: x\r\naccept: text/event-stream\r\n\r\n', () => socket.destroy());
  });
  socket.on('error', () => undefined);
}

describe('connection close, watched from the first byte', () => {
  it('a client that closed while the handler awaited reads as closed once it looks, and a late watcher sees it too', async () => {
    let seen: ((signals: [AbortSignal, AbortSignal]) => void) | undefined;
    const looked = new Promise<[AbortSignal, AbortSignal]>((resolve) => (seen = resolve));
    const server = await serverThatAwaits(150, (watched, late) => seen!([watched, late]));
    try {
      sendAndClose(server);
      const [watched, late] = await looked;

      expect(watched.aborted).toBe(true);
      expect(late.aborted).toBe(true);
      await expect(untilClosed(watched)).resolves.toBeUndefined();
    } finally {
      server.close();
    }
  });

  it('a connection still open is not closed, and untilClosed settles when it goes', async () => {
    let settled = false;
    let closedWhileOpen: boolean | undefined;
    const server = createServer((req: ApiRequest, res: ServerResponse) => {
      watchConnectionClose()(req, res, () => {
        res.writeHead(200);
        res.write('open\n');
        closedWhileOpen = req.connectionClosed!.aborted;
        void untilClosed(req.connectionClosed!).then(() => (settled = true));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
      await new Promise((resolve) => socket.once('data', resolve));
      expect(closedWhileOpen).toBe(false);
      expect(settled).toBe(false);
      socket.destroy();
      const until = Date.now() + 2000;
      while (!settled && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      expect(settled).toBe(true);
    } finally {
      server.close();
    }
  });
});
