import { CodeModeResultSchema } from '@codemode/contracts';
import { TestStack } from './utils/test-stack';

jest.setTimeout(180_000);

/** Deterministic PRNG so a failure can be replayed from its seed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = Number(process.env.FUZZ_SEED ?? 20261129);
const REQUESTS = 1500;

describe(`fuzzing every route (seed ${SEED})`, () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ env: { CODEMODE_TIMEOUT_MS: '1000' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('never answers 5xx, and exec/wait always answer a valid CodeModeResult', async () => {
    const rand = prng(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)];
    const randomString = (max: number): string => {
      const alphabet = [
        'a',
        'Z',
        '0',
        '.',
        ':',
        '-',
        '_',
        '/',
        '%',
        ' ',
        '\u00e9',
        '\u{1F600}',
        '"',
        '\\',
        '\n',
        '\u0000',
        '\ud800',
        '<',
        '{',
      ];
      let s = '';
      const n = Math.floor(rand() * max);
      for (let i = 0; i < n; i += 1) s += pick(alphabet);
      return s;
    };
    const randomJson = (depth: number): unknown => {
      switch (Math.floor(rand() * (depth > 3 ? 6 : 9))) {
        case 0:
          return null;
        case 1:
          return rand() < 0.5;
        case 2:
          return pick([0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, 100, 60000]);
        case 3:
          return randomString(20);
        case 4:
          return pick([
            'return 1',
            'while(true){}',
            'ls -la',
            'require("fs")',
            'return this',
            'throw 1',
            '}{',
            'return process.env',
            'console.log(1)',
            'await null; return [1]',
            'true',
            'list',
            'poll',
          ]);
        case 5:
          return undefined;
        case 6:
          return Array.from({ length: Math.floor(rand() * 4) }, () => randomJson(depth + 1));
        default: {
          const keys = [
            'title',
            'code',
            'command',
            'restartSafe',
            'awaitResults',
            'language',
            'typecheck',
            'runId',
            'run_id',
            'agentId',
            'codeMode',
            'shell',
            'timeoutMs',
            'tools',
            'results',
            'action',
            'sessionId',
            'background',
            'yieldMs',
            '__proto__',
            'constructor',
            randomString(6),
          ];
          const obj: Record<string, unknown> = {};
          for (let i = Math.floor(rand() * 5); i > 0; i -= 1) obj[pick(keys)] = randomJson(depth + 1);
          return obj;
        }
      }
    };
    const randomBody = (): string | undefined => {
      switch (Math.floor(rand() * 8)) {
        case 0:
          return undefined;
        case 1:
          return randomString(40);
        case 2:
          return '{"title":"t","code":' + randomString(10);
        case 3:
          return JSON.stringify({ title: randomString(130), code: pick(['return 1', 'ls', '']) });
        case 4:
          return JSON.stringify({ title: 'fuzz', code: 'return ' + JSON.stringify(randomString(10)) });
        default:
          return JSON.stringify(randomJson(0)) ?? 'null';
      }
    };
    const sids = [
      's1',
      'fuzz',
      'a.b:c-d_e',
      'x'.repeat(128),
      'x'.repeat(129),
      '',
      '..',
      '%2e%2e',
      'ä',
      'a%2Fb',
      '%00',
      'cm_x',
      '%E0%A4%A',
      ' ',
    ];
    // Lone surrogates cannot be percent-encoded as UTF-8: send the bytes of one instead (invalid UTF-8).
    const encode = (value: string): string =>
      encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '')) + (/[\ud800-\udfff]/.test(value) ? '%ED%A0%80' : '');
    const sid = (): string => (rand() < 0.6 ? pick(sids) : encode(randomString(12)));
    const runId = (): string => pick(['cm_00000000-0000-0000-0000-000000000000', 'x', '%ZZ', encode(randomString(8))]);
    const routes: Array<() => { method: string; path: string; runResult: boolean }> = [
      () => ({ method: 'POST', path: `/v1/sessions/${sid()}/exec`, runResult: true }),
      () => ({ method: 'POST', path: `/v1/sessions/${sid()}/wait`, runResult: true }),
      () => ({ method: pick(['PUT', 'GET']), path: `/v1/sessions/${sid()}`, runResult: false }),
      () => ({ method: 'GET', path: `/v1/sessions/${sid()}/runs/${runId()}`, runResult: false }),
      () => ({
        method: 'GET',
        path: `/v1/sessions/${sid()}/events?${pick(['', 'limit=5', 'limit=-1', 'limit=abc', 'after=0-0', 'after=x', 'after=1-1&limit=1000', 'limit=1e3', 'after[]=1'])}`,
        runResult: false,
      }),
      () => ({ method: 'GET', path: `/v1/sessions/${sid()}/transcript`, runResult: false }),
      () => ({ method: pick(['GET', 'PUT']), path: `/v1/sessions/${sid()}/tools`, runResult: false }),
      () => ({ method: 'GET', path: `/v1/sessions/${sid()}/store`, runResult: false }),
      () => ({ method: 'DELETE', path: `/v1/sessions/${sid()}/runs/${runId()}`, runResult: false }),
      () => ({ method: 'POST', path: `/v1/sessions/${sid()}/runs/${runId()}/tool-results`, runResult: false }),
      () => ({ method: 'POST', path: `/v1/sessions/${sid()}/process`, runResult: false }),
      () => ({ method: 'POST', path: `/v1/sessions/${sid()}/shell/exec`, runResult: false }),
      () => ({
        method: pick(['GET', 'DELETE', 'PATCH', 'POST']),
        path: pick(['/v1/sessions', '/v1', '/health/ready', '/nope', `/v1/sessions/${sid()}/nope`]),
        runResult: false,
      }),
    ];
    const headerSets: Array<Record<string, string>> = [
      { 'content-type': 'application/json' },
      { 'content-type': 'text/plain' },
      {},
      { 'content-type': 'application/json; charset=latin1' },
      { 'content-type': 'multipart/form-data; boundary=x' },
      { 'idempotency-key': `k-${Math.floor(rand() * 50)}` },
      { 'idempotency-key': 'k\u00e9 y\t' },
      { 'idempotency-key': 'k'.repeat(300) },
      { authorization: 'Bearer nothing' },
      { 'content-encoding': 'gzip', 'content-type': 'application/json' },
    ];

    const counts = { total: 0, byStatus: {} as Record<number, number>, results: 0 };
    const failures: string[] = [];
    let next = 0;
    const one = async (): Promise<void> => {
      const route = pick(routes)();
      const body = route.method === 'GET' ? undefined : randomBody();
      const headers = pick(headerSets);
      const res = await fetch(`${stack.baseUrl}${route.path}`, {
        method: route.method,
        headers,
        body,
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      counts.total += 1;
      counts.byStatus[res.status] = (counts.byStatus[res.status] ?? 0) + 1;
      const where = `${route.method} ${route.path} ${JSON.stringify(headers)} body=${(body ?? '').slice(0, 200)}`;
      if (res.status >= 500) failures.push(`${res.status} ${where}: ${text.slice(0, 300)}`);
      if (route.runResult && res.status !== 404) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        if (res.status !== 200 || !CodeModeResultSchema.safeParse(parsed).success)
          failures.push(`not a CodeModeResult ${res.status} ${where}: ${text.slice(0, 300)}`);
        else counts.results += 1;
      }
    };
    const lanes = Array.from({ length: 8 }, async () => {
      while (next < REQUESTS) {
        next += 1;
        await one();
      }
    });
    await Promise.all(lanes);
    process.stdout.write(`fuzz: ${JSON.stringify(counts)}\n`);
    expect(failures).toEqual([]);
    expect(counts.total).toBeGreaterThanOrEqual(1000);
    expect(counts.results).toBeGreaterThan(100);
  });
});
