import { readdirSync, readFileSync } from 'node:fs';
import { BODY_THREAD_NICE, BodyThreadError, BodyThreads } from './body-threads';

const bytes = (value: unknown): Uint8Array => new Uint8Array(Buffer.from(JSON.stringify(value)));

describe('BodyThreads', () => {
  let threads: BodyThreads;
  afterEach(async () => {
    await threads.onModuleDestroy();
  });

  it('parses, depth-checks and checks exec bodies off the event loop with the answers of the inline path', async () => {
    threads = new BodyThreads(1);
    expect(await threads.run('a', { kind: 'json', bytes: bytes({ a: [1] }) })).toEqual({ kind: 'json', value: { a: [1] } });
    expect(await threads.run('a', { kind: 'json', bytes: new Uint8Array(Buffer.from('['.repeat(129) + ']'.repeat(129))) })).toEqual({
      kind: 'too_deep',
    });
    expect(await threads.run('a', { kind: 'json', bytes: new Uint8Array(Buffer.from('{nope')) })).toEqual({ kind: 'invalid_json' });
    expect(await threads.run('a', { kind: 'exec', bytes: bytes({ title: 't', code: 'return 1' }) })).toMatchObject({
      kind: 'checked',
      check: { ok: true, input: { title: 't', code: 'return 1', restartSafe: false, awaitResults: false } },
    });
    expect(await threads.run('a', { kind: 'exec', bytes: bytes({ title: 't', code: 'require("fs")', restartSafe: true }) })).toMatchObject({
      kind: 'checked',
      check: { ok: false, error: 'code mode module access is disabled.' },
      replaySafe: true,
    });
  });

  it('checks an exec body that came parsed (an MCP message) and merges an agent registration, answering lists as bytes', async () => {
    threads = new BodyThreads(1);
    expect(await threads.run('a', { kind: 'exec-value', value: { title: 't', code: 'require("fs")' } })).toMatchObject({
      kind: 'checked',
      check: { ok: false, error: 'code mode module access is disabled.' },
    });
    const context = {
      tenant: 'a',
      mcp: { tools: [], servers: [] },
      limits: { timeoutMs: 10_000, maxOutputBytes: 65_536 },
      // The tenant's tools cross as JSON in shared memory (never cloned): the merge still sees them.
      tenantTools: { version: '1', json: sharedBytes([{ name: 'lookup_order', description: 'd', inputSchema: { type: 'object' } }]) },
    };
    const operator = { name: 'charge', description: 'd', inputSchema: { type: 'object' }, registeredBy: 'operator' };
    const merge = await threads.run('a', {
      kind: 'tools-merge',
      stored: bytes([operator]),
      submitted: bytes([{ name: 'note', description: 'd', inputSchema: { type: 'object' } }]),
      context,
    });
    if (!merge.ok) throw new Error(merge.error);
    expect(merge.names).toEqual(['charge', 'note']);
    expect(JSON.parse(Buffer.from(merge.toolsJson as Uint8Array).toString('utf8'))).toEqual([
      operator,
      { name: 'note', description: 'd', inputSchema: { type: 'object' }, registeredBy: 'agent' },
    ]);
    expect(JSON.parse(Buffer.from(merge.view as Uint8Array).toString('utf8'))).toMatchObject({ execDescription: expect.any(String) });
    const locked = await threads.run('a', {
      kind: 'tools-merge',
      stored: bytes([operator]),
      submitted: bytes([{ ...operator, inputSchema: {} }]),
      context,
    });
    expect(locked).toMatchObject({ ok: false, refusal: 'operator_locked' });
    const tenantName = await threads.run('a', {
      kind: 'tools-merge',
      stored: null,
      submitted: bytes([{ name: 'lookup_order', description: 'mine', inputSchema: { type: 'object' } }]),
      context,
    });
    expect(tenantName).toMatchObject({ ok: false, refusal: 'operator_locked' });
    const view = JSON.parse(Buffer.from(merge.view as Uint8Array).toString('utf8')) as { catalog: { toolName: string; trusted?: true }[] };
    expect(view.catalog.find((entry) => entry.toolName === 'lookup_order')).toMatchObject({ trusted: true });
  });

  it('serves tenants round-robin: one tenant queueing many big bodies delays another by at most one of them', async () => {
    threads = new BodyThreads(1);
    const code = Array.from({ length: 3000 }, (_, i) => `const v${i} = [${i}];`).join('\n');
    const order: string[] = [];
    const big = Array.from({ length: 5 }, (_, i) =>
      threads.run('attacker', { kind: 'exec', bytes: bytes({ title: 't', code }) }).then(() => order.push(`attacker-${i}`)),
    );
    const small = threads.run('victim', { kind: 'exec', bytes: bytes({ title: 't', code: 'return 1' }) }).then(() => order.push('victim'));
    await Promise.all([...big, small]);
    // The attacker's first body was on the thread already and its second was next in turn; then the victim's.
    expect(order.indexOf('victim')).toBe(2);
  });

  it('gives one tenant one thread at a time, leaving the other to another tenant', async () => {
    threads = new BodyThreads(2);
    const small = (tenant: string) => threads.run(tenant, { kind: 'exec', bytes: bytes({ title: 't', code: 'return 1' }) });
    // Both threads started (a thread starts on first use), so only the attacker's bodies take time.
    await Promise.all([small('warm-a'), small('warm-b')]);
    const code = Array.from({ length: 20_000 }, (_, i) => `const v${i} = [${i}];`).join('\n');
    const order: string[] = [];
    const big = Array.from({ length: 3 }, (_, i) =>
      threads.run('attacker', { kind: 'exec', bytes: bytes({ title: 't', code }) }).then(() => order.push(`attacker-${i}`)),
    );
    const victim = small('victim').then(() => order.push('victim'));
    await Promise.all([...big, victim]);
    // With both threads for the attacker, its first two bodies would both be running before the victim's.
    expect(order).toEqual(['victim', 'attacker-0', 'attacker-1', 'attacker-2']);
  });

  (process.platform === 'linux' ? it : it.skip)('runs its threads niced, and only them: the event loop keeps its priority', async () => {
    const before = nicenessOfThreads();
    threads = new BodyThreads(2);
    await Promise.all([threads.run('a', { kind: 'json', bytes: bytes(1) }), threads.run('b', { kind: 'json', bytes: bytes(2) })]);
    const added = [...nicenessOfThreads()].filter(([tid]) => !before.has(tid)).map(([, nice]) => nice);
    expect(BODY_THREAD_NICE).toBe(10);
    expect(added.filter((nice) => nice === BODY_THREAD_NICE)).toHaveLength(2);
    expect(nicenessOfThreads().get(process.pid)).toBe(0);
  });

  it('refuses tasks once shut down, with a BodyThreadError', async () => {
    threads = new BodyThreads(1);
    await threads.onModuleDestroy();
    await expect(threads.run('a', { kind: 'json', bytes: bytes([1]) })).rejects.toBeInstanceOf(BodyThreadError);
  });
});

function sharedBytes(value: unknown): Uint8Array {
  const json = Buffer.from(JSON.stringify(value));
  const shared = new Uint8Array(new SharedArrayBuffer(json.length));
  shared.set(json);
  return shared;
}

/** Niceness of each of this process's threads, by thread id (Linux /proc). */
function nicenessOfThreads(): Map<number, number> {
  const niceness = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${process.pid}/task`)) {
    const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
    // Fields after the command's closing parenthesis; niceness is the 19th field of the line.
    niceness.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return niceness;
}
