import { Writable } from 'node:stream';
import pino from 'pino';
import { WebhookRefusalWarnings } from './webhook-refusal-warnings';

function capture(): { lines: Array<Record<string, unknown>>; warnings: WebhookRefusalWarnings } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const logger = pino({ level: 'debug', formatters: { level: (label) => ({ level: label }) } }, sink);
  return { lines, warnings: new WebhookRefusalWarnings(logger) };
}

const REFUSAL = { host: '127.0.0.1', address: '127.0.0.1', addressClass: 'loopback' } as const;
const RUN = { tenant: 'acme', sessionId: 's-1', runId: 'cm_1', tool: 'hook' };

describe('WebhookRefusalWarnings', () => {
  it('warns naming CODEMODE_WEBHOOK_ALLOW on the workers, once per host per 10 minutes, at debug between', async () => {
    const { lines, warnings } = capture();
    warnings.refused(REFUSAL, RUN, 0);
    warnings.refused(REFUSAL, RUN, 60_000);
    warnings.refused({ ...REFUSAL, host: '10.0.0.5', address: '10.0.0.5', addressClass: 'private' }, RUN, 60_000);
    warnings.refused(REFUSAL, RUN, 10 * 60_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((line) => [line.level, line.host])).toEqual([
      ['warn', '127.0.0.1'],
      ['debug', '127.0.0.1'],
      ['warn', '10.0.0.5'],
      ['warn', '127.0.0.1'],
    ]);
    expect(lines[0]).toMatchObject({ tenant: 'acme', sessionId: 's-1', runId: 'cm_1', tool: 'hook' });
    expect(lines[0].msg).toContain('set CODEMODE_WEBHOOK_ALLOW on the workers as on the API');
    expect(lines[0].msg).toContain('is a loopback address (127.0.0.1)');
  });
});
