import pino, { type DestinationStream, type Logger } from 'pino';
import { createLogger } from './logger';
import { logContextFields, withLogContext } from './log-context';
import { REDACTED, redactSecrets } from './log-redaction';

/** Lines written to memory, with their `time` taken out (two loggers never share a clock tick). */
function memory(): DestinationStream & { lines: string[] } {
  const lines: string[] = [];
  return { lines, write: (line: string) => void lines.push(line.replace(/"time":"[^"]*",/, '')) };
}

/** The logger as it was configured before redactSecrets: pino's own `redact` paths (issue 41). */
function pinoRedactLogger(destination: DestinationStream): Logger {
  return pino(
    {
      level: 'info',
      base: { service: 'api', version: '1', pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: logContextFields,
      formatters: { level: (label) => ({ level: label }) },
      redact: {
        paths: ['authorization', '*.authorization', 'headers.authorization', 'apiKey', '*.apiKey', 'env', '*.env', 'secret', '*.secret'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

class WithEnv {
  readonly name = 'probe';
  get env(): string {
    return 'inherited secret';
  }
}

/** Made once: a stack names the line that made the error. */
const errorWithEnv = Object.assign(new Error('boom'), { env: { KEY: 'k5' } });
const plainError = new Error('plain');

/** What each logger writes for the same calls. */
function writeAll(logger: Logger): void {
  logger.info({ headers: { authorization: 'Bearer k1', accept: 'json' }, status: 200 }, 'request');
  logger.info({ authorization: 'k2', apiKey: 'k3', env: { TOKEN: 'k4' }, secret: 's1', tenant: 'acme' }, 'top level');
  logger.info({ nested: { secret: undefined, apiKey: null }, deep: { inner: { secret: 'depth two is not redacted' } } }, 'depths');
  logger.info({ list: [{ secret: 'array items are not redacted' }], when: new Date(0), ratio: Number.NaN }, 'kinds');
  logger.warn({ err: errorWithEnv }, 'error with an env');
  logger.warn({ err: plainError }, 'plain error');
  logger.info({ probe: new WithEnv() }, 'inherited field');
  logger.info({ env: undefined, secret: () => 'k6', requestId: 'r1', durationMs: 1.5 }, 'skipped values');
  logger.info('message only');
  logger.info({ a: 1 }, 'interpolated %s %j %o', 'text', { secret: 'k11' }, { headers: { authorization: 'k12' } });
  logger.warn('interpolated %j', { apiKey: 'k13', plain: 1 });
  logger.error(errorWithEnv, 'an error as the fields');
  withLogContext({ requestId: 'req-1' }, () => logger.info({ route: '/v1/x' }, 'in a context'));
  const child = logger.child({ apiKey: 'k7', tenant: 't', headers: { authorization: 'k8' } });
  child.info({ x: 1 }, 'child');
  child.child({ secret: 'k9', runId: 'cm_1' }).warn({ env: { A: 'k10' } }, 'grandchild');
}

describe('redactSecrets', () => {
  it('writes what pino redaction wrote, line for line', () => {
    const before = memory();
    const after = memory();
    writeAll(pinoRedactLogger(before));
    writeAll(createLogger({ service: 'api', level: 'info', version: '1' }, after));
    expect(after.lines).toHaveLength(15);
    expect(after.lines).toEqual(before.lines);
    const text = after.lines.join('');
    for (const secret of ['k1', 'k2', 'k3', 'k4', 'k5', 'k7', 'k8', 'k9', 'k10', 'k11', 'k12', 'k13', 's1', 'inherited secret']) {
      expect(text).not.toMatch(new RegExp(`\\\\?"${secret}\\\\?"`));
    }
    expect(text).toContain(`"authorization":"${REDACTED}"`);
    expect(text).toContain('depth two is not redacted');
  });

  it('returns the fields themselves when nothing is secret (no copy per line)', () => {
    const fields = { requestId: 'r', method: 'POST', route: '/v1/sessions/:sid/exec', status: 200, nested: { a: 1 } };
    expect(redactSecrets(fields)).toBe(fields);
    expect(redactSecrets({ headers: { authorization: 'k' } })).toEqual({ headers: { authorization: REDACTED } });
  });

  it('leaves the logged object as it was', () => {
    const headers = { authorization: 'k' };
    const fields = { headers, apiKey: 'k' };
    redactSecrets(fields);
    expect(fields).toEqual({ headers: { authorization: 'k' }, apiKey: 'k' });
  });
});
