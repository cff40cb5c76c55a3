import fc from 'fast-check';

/** One HTTP request the fuzz sends; `expects` names the contract shape its answer must have. */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** `result`: exec/wait, always 200 with a CodeModeResult unless the session is unknown (SPEC §2). */
  expects: 'result' | 'any';
}

/** Characters that break parsers: quotes, escapes, NUL, a lone surrogate, emoji, path and URL syntax. */
const NASTY = ['a', 'Z', '0', '.', ':', '-', '_', '/', '%', ' ', '\u00e9', '\u{1F600}', '"', '\\', '\n', '\u0000', '\ud800', '<', '{'];

export const nastyString = (maxLength: number): fc.Arbitrary<string> =>
  fc.oneof(
    fc.array(fc.constantFrom(...NASTY), { maxLength }).map((chars) => chars.join('')),
    fc.string({ unit: 'binary', maxLength }),
  );

/** Field names of every body the API reads, plus prototype keys. */
const FIELDS = [
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
  'name',
  'description',
  'inputSchema',
  'endpoint',
  'policy',
  'notifyUrl',
  'repairAttempts',
  'skills',
  'content',
  'headers',
  'outputSchema',
  'id',
  'ok',
  'value',
  'error',
  '__proto__',
  'constructor',
];

const SNIPPETS = ['return 1', 'while(true){}', 'ls -la', 'require("fs")', 'return this', 'throw 1', '}{', 'await null; return [1]', 'poll'];

const NUMBERS = [0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, 100, 60000, 0x7fffffff];

/** A JSON-ish value built from the API's own field names, snippets of code and edge numbers. */
export const fuzzJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.constantFrom(...NUMBERS),
    fc.constantFrom(...SNIPPETS),
    nastyString(20),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), nastyString(6)), tie('value'), { maxKeys: 5 }),
  ),
})).value;

const bodyArb: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constant(undefined),
  nastyString(40),
  nastyString(10).map((tail) => `{"title":"t","code":${tail}`),
  fc.record({ title: nastyString(130), code: fc.constantFrom('return 1', 'ls', '') }).map((b) => JSON.stringify(b)),
  nastyString(10).map((s) => JSON.stringify({ title: 'fuzz', code: `return ${JSON.stringify(s)}` })),
  { arbitrary: fuzzJson.map((v) => JSON.stringify(v) ?? 'null'), weight: 3 },
);

/** A path segment: a lone surrogate cannot be percent-encoded as UTF-8, so its bytes are sent instead (invalid UTF-8). */
export function encodeSegment(value: string): string {
  const surrogate = /[\ud800-\udfff]/;
  return encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '')) + (surrogate.test(value) ? '%ED%A0%80' : '');
}

const sidArb = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      's1',
      'fuzz',
      'a.b:c-d_e',
      'x'.repeat(128),
      'x'.repeat(129),
      '',
      '..',
      '%2e%2e',
      '%C3%A4',
      'a%2Fb',
      '%00',
      'cm_x',
      '%E0%A4%A',
      '%20',
    ),
    weight: 3,
  },
  { arbitrary: nastyString(12).map(encodeSegment), weight: 2 },
);
const runIdArb = fc.oneof(fc.constantFrom('cm_00000000-0000-0000-0000-000000000000', 'x', '%ZZ'), nastyString(8).map(encodeSegment));
const eventsQuery = fc.constantFrom(
  '',
  'limit=5',
  'limit=-1',
  'limit=abc',
  'after=0-0',
  'after=x',
  'after=1-1&limit=1000',
  'limit=1e3',
  'after[]=1',
);

const routeArb: fc.Arbitrary<{ method: string; path: string; expects: FuzzRequest['expects'] }> = fc.oneof(
  sidArb.map((s) => ({ method: 'POST', path: `/v1/sessions/${s}/exec`, expects: 'result' as const })),
  sidArb.map((s) => ({ method: 'POST', path: `/v1/sessions/${s}/wait`, expects: 'result' as const })),
  fc
    .tuple(fc.constantFrom('PUT', 'GET', 'DELETE'), sidArb)
    .map(([method, s]) => ({ method, path: `/v1/sessions/${s}`, expects: 'any' as const })),
  fc.tuple(fc.constantFrom('GET', 'DELETE'), sidArb, runIdArb).map(([method, s, r]) => ({
    method,
    path: `/v1/sessions/${s}/runs/${r}`,
    expects: 'any' as const,
  })),
  fc.tuple(sidArb, eventsQuery).map(([s, q]) => ({ method: 'GET', path: `/v1/sessions/${s}/events?${q}`, expects: 'any' as const })),
  fc
    .tuple(sidArb, fc.constantFrom('transcript', 'store', 'runs', 'tools/definitions?format=openai', 'tools/definitions?format=x'))
    .map(([s, what]) => ({ method: 'GET', path: `/v1/sessions/${s}/${what}`, expects: 'any' as const })),
  fc
    .tuple(fc.constantFrom('GET', 'PUT'), sidArb)
    .map(([method, s]) => ({ method, path: `/v1/sessions/${s}/tools`, expects: 'any' as const })),
  fc
    .tuple(sidArb, runIdArb)
    .map(([s, r]) => ({ method: 'POST', path: `/v1/sessions/${s}/runs/${r}/tool-results`, expects: 'any' as const })),
  fc.tuple(sidArb, fc.constantFrom('process', 'shell/exec', 'skills')).map(([s, what]) => ({
    method: what === 'skills' ? 'PUT' : 'POST',
    path: `/v1/sessions/${s}/${what}`,
    expects: 'any' as const,
  })),
  fc
    .tuple(fc.constantFrom('GET', 'PUT', 'DELETE'), fc.constantFrom('skills', 'tools'), nastyString(10).map(encodeSegment))
    .map(([method, kind, name]) => ({ method, path: `/v1/${kind}/${name}`, expects: 'any' as const })),
  fc
    .tuple(
      fc.constantFrom('GET', 'DELETE', 'PATCH', 'POST'),
      fc.constantFrom(
        '/v1/sessions',
        '/v1/sessions?limit=-1&cursor=%00',
        '/v1',
        '/v1/fleet',
        '/v1/skills',
        '/v1/tools',
        '/health/ready',
        '/nope',
        '/v1/sessions/s1/nope',
      ),
    )
    .map(([method, path]) => ({ method, path, expects: 'any' as const })),
);

const headersArb: fc.Arbitrary<Record<string, string>> = fc.oneof(
  fc.constant({ 'content-type': 'application/json' }),
  fc.constant({ 'content-type': 'text/plain' }),
  fc.constant({}),
  fc.constant({ 'content-type': 'application/json; charset=latin1' }),
  fc.constant({ 'content-type': 'multipart/form-data; boundary=x' }),
  fc.integer({ min: 0, max: 50 }).map((k) => ({ 'content-type': 'application/json', 'idempotency-key': `k-${k}` })),
  fc.constant({ 'idempotency-key': 'k\u00e9 y\t' }),
  fc.constant({ 'idempotency-key': 'k'.repeat(300) }),
  fc.constant({ authorization: 'Bearer nothing' }),
  fc.constant({ 'content-encoding': 'gzip', 'content-type': 'application/json' }),
  fc.constant({ 'content-type': 'application/json', accept: 'text/event-stream' }),
  fc.constant({ 'content-type': 'application/json', 'x-request-id': 'r'.repeat(200) }),
  fc.constant({ 'content-type': 'application/json', 'x-request-id': 'bad id ;,"' }),
);

/** A request at any REST route, with a random body and headers. */
export const restRequest: fc.Arbitrary<FuzzRequest> = fc
  .tuple(routeArb, bodyArb, headersArb)
  .map(([route, body, headers]) => ({ ...route, headers, body: route.method === 'GET' ? undefined : body }));
