import { readSse, SseParser } from './sse';

describe('SseParser', () => {
  it('parses the messages this API sends, ignoring comments and heartbeats', () => {
    const parser = new SseParser();
    const text = ': streaming session events\n\nid: 1-0\nevent: run.requested\ndata: {"a":1}\n\n: ping\n\n';
    expect(parser.push(text)).toEqual([{ id: '1-0', event: 'run.requested', data: '{"a":1}' }]);
  });

  it('reassembles lines split across chunks, CRLF pairs included', () => {
    const parser = new SseParser();
    const chunks = ['id: 1', '-0\r', '\nda', 'ta: x\r\n', 'data:y\r\n\r', '\n'];
    const out = chunks.flatMap((chunk) => parser.push(chunk));
    expect(out).toEqual([{ id: '1-0', event: 'message', data: 'x\ny' }]);
  });

  it('accepts bare CR line ends, keeps the last id, and skips messages without data', () => {
    const parser = new SseParser();
    expect(parser.push('id: 7-0\revent: x\r\rdata: z\r\r')).toEqual([{ id: '7-0', event: 'message', data: 'z' }]);
  });

  it('decodes UTF-8 split across byte chunks', async () => {
    const bytes = new TextEncoder().encode('data: héllo\n\n');
    async function* body(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < bytes.length; i += 1) yield bytes.slice(i, i + 1);
    }
    const out = [];
    for await (const message of readSse(body())) out.push(message);
    expect(out).toEqual([{ id: undefined, event: 'message', data: 'héllo' }]);
  });
});
