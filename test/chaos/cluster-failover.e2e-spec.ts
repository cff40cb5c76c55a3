import type { CodeModeClient } from '@codemode/client';
import { PrivateRedisCluster } from '../utils/private-redis-cluster';
import { keySlot } from '@codemode/events';
import { TestStack } from '../utils/test-stack';
import { busiestLogSecond, execPath, post, show, sleep, STORE_UNAVAILABLE_PATTERN, type Exchange } from './chaos-helpers';

jest.setTimeout(120_000);

/**
 * Sessions under load, each with one call in flight at a time, spread over the cluster's slots.
 * SPEC §17 measures 32 (`FAILOVER_SESSIONS=32`); `npm test` runs 12. At 32, execs sent just
 * before the kill answered HTTP 500 (2 of 16 local runs): ioredis resent their `request-run`
 * once the failover was over, after it had run on the old primary (RunExistsError;
 * RunLedger.request now answers such a resend as created).
 */
const SESSIONS = Number(process.env.FAILOVER_SESSIONS ?? 12);
const LOAD_BEFORE_KILL_MS = 3_000;
const LOAD_AFTER_KILL_MS = 20_000;
/** SPEC §13: a killed primary fails over and the service serves new execs within this. */
const SERVING_AGAIN_MS = 15_000;
/** Served means answered as on a healthy cluster (a trivial exec takes tens of ms here), not just answered. */
const SERVED_WITHIN_MS = 2_000;

interface Call {
  sid: string;
  route: 'exec' | 'session';
  sentAt: number;
  exchange: Exchange;
  retryAfter?: string | null;
}

describe('chaos: a Redis Cluster primary is killed under load (SPEC §13 "Faults")', () => {
  let cluster: PrivateRedisCluster;
  let stack: TestStack;
  let client: CodeModeClient;

  beforeAll(async () => {
    cluster = await PrivateRedisCluster.start();
    stack = await TestStack.start({ workers: 1, redisClusterNodes: cluster.seeds, env: { CODEMODE_TIMEOUT_MS: '4000' } });
    client = stack.client();
  });
  afterAll(async () => {
    await stack?.stop();
    await cluster?.cleanup();
  });

  it('answers every request, never 500, and serves new execs within 15 s without a restart', async () => {
    const calls: Call[] = [];
    let stopAt = Number.POSITIVE_INFINITY;
    const load = async (sid: string): Promise<void> => {
      for (let n = 0; Date.now() < stopAt; n += 1) {
        const sentAt = Date.now();
        calls.push({ sid, route: 'exec', sentAt, exchange: await post(client, execPath(sid), { title: 'load', code: `return ${n}` }) });
        if (n % 5 === 0) {
          const at = Date.now();
          const res = await client.raw('GET', `/v1/sessions/${sid}`).catch(() => null);
          const exchange: Exchange = res
            ? { kind: 'http_error', status: res.status, text: res.text.slice(0, 300), at: Date.now() }
            : { kind: 'no_answer', error: 'connection failed', at: Date.now() };
          calls.push({ sid, route: 'session', sentAt: at, exchange, retryAfter: res?.headers.get('retry-after') });
        }
      }
    };
    const sessions = Array.from({ length: SESSIONS }, (_, i) => `failover-${i}`);
    const running = Promise.all(sessions.map(load));
    await sleep(LOAD_BEFORE_KILL_MS);
    const [victim] = await cluster.primaries();
    const onVictim = await cluster.slotsOf(victim);
    const hit = sessions.filter((sid) => onVictim(keySlot(`${stack.prefix}:{default:${sid}}`)));
    const killedAt = Date.now();
    await cluster.kill(victim);
    stopAt = killedAt + LOAD_AFTER_KILL_MS;
    await running;
    // The load reached the killed primary's slots, and its replica took them over.
    expect(hit.length).toBeGreaterThan(0);
    expect(await cluster.primaries()).toHaveLength(3);
    expect(await cluster.primaries()).not.toContain(victim);

    const execs = calls.filter((c) => c.route === 'exec');
    // A 500 is the API's "logged" failure: show what it logged, so a failing run names its cause.
    if (calls.some((c) => c.exchange.kind === 'http_error' && c.exchange.status === 500))
      console.log(
        stack.api
          .logs()
          .split('\n')
          .filter((l) => l.includes('unhandled error in request'))
          .slice(0, 8)
          .join('\n'),
      );
    const completed = (c: Call) => c.exchange.kind === 'answer' && c.exchange.result.status === 'completed';
    // Every exec answered 200 with a result: completed, or "Redis unavailable" (SPEC §2).
    const wrong = execs.filter(
      (c) =>
        !completed(c) &&
        !(c.exchange.kind === 'answer' && c.exchange.result.status === 'failed' && c.exchange.result.code === 'runtime_unavailable'),
    );
    expect(wrong.map((c) => `${c.sid} +${c.sentAt - killedAt} ms: ${show(c.exchange)}`)).toEqual([]);
    // Other routes: 200, or 503 with Retry-After and an error that says to retry; never a 500.
    const reads = calls.filter((c) => c.route === 'session');
    const badReads = reads.filter((c) => {
      if (c.exchange.kind !== 'http_error') return true;
      if (c.exchange.status === 200) return false;
      return !(c.exchange.status === 503 && c.retryAfter && STORE_UNAVAILABLE_PATTERN.test(c.exchange.text));
    });
    expect(badReads.map((c) => `${c.sid} +${c.sentAt - killedAt} ms: ${show(c.exchange)}`)).toEqual([]);

    // Serving again: from some moment within 15 s of the kill, every exec of every session
    // completes promptly (an answer that comes only by the API's fallback read, ~10 s late, is
    // not service: that is what lost reply subscriptions look like).
    const slow = execs.filter((c) => completed(c) && c.exchange.at - c.sentAt >= SERVED_WITHIN_MS);
    const failedAfter = execs.filter((c) => !completed(c) || slow.includes(c)).map((c) => c.sentAt);
    const servingFrom = failedAfter.length === 0 ? killedAt : Math.max(...failedAfter) + 1;
    if (process.env.CHAOS_DEBUG)
      console.log(slow.map((c) => `${c.sid} +${c.sentAt - killedAt}..+${c.exchange.at - killedAt} ${show(c.exchange)}`).join('\n'));
    const slowest = Math.max(...execs.map((c) => c.exchange.at - c.sentAt));
    if (process.env.CHAOS_DEBUG)
      for (const sid of sessions) {
        const late = execs.filter((c) => c.sid === sid && c.sentAt > killedAt + 5_000).map((c) => c.exchange.at - c.sentAt);
        console.log(`${sid} ${hit.includes(sid) ? 'on victim' : ''}: ${late.length} execs after kill+5s, max ${Math.max(...late)} ms`);
      }
    console.log(
      `cluster-failover: killed primary ${victim} (${hit.length}/${SESSIONS} sessions on it); ${execs.length} execs ` +
        `(${execs.filter((c) => !completed(c)).length} runtime_unavailable, ${slow.length} completed in ${SERVED_WITHIN_MS} ms or more, slowest ${slowest} ms), ${reads.length} reads ` +
        `(${reads.filter((c) => c.exchange.kind === 'http_error' && c.exchange.status === 503).length} 503); serving again ${Math.max(0, servingFrom - killedAt)} ms after the kill`,
    );
    expect(servingFrom - killedAt).toBeLessThanOrEqual(SERVING_AGAIN_MS);
    // SPEC §17: no session unserved past 15 s, the calls in flight at the kill included.
    expect(slowest).toBeLessThanOrEqual(SERVING_AGAIN_MS);
    for (const sid of sessions)
      expect([sid, execs.filter((c) => c.sid === sid && c.sentAt >= servingFrom).length >= 10]).toEqual([sid, true]);

    // Neither app restarted, and neither logged a storm (SPEC §13: one line a second per cause at most).
    expect(stack.api.alive && stack.workers[0].alive).toBe(true);
    for (const app of [stack.api, stack.workers[0]]) {
      const busiest = busiestLogSecond(app.logs());
      console.log(`cluster-failover: ${app.role}'s busiest log second: ${JSON.stringify(busiest)}`);
      if (process.env.CHAOS_DEBUG)
        console.log(
          app
            .logs()
            .split('\n')
            .filter((l) => l.includes(busiest.msg))
            .slice(0, 12)
            .join('\n'),
        );
      expect(busiest.lines <= 3 ? 'no storm' : busiest).toBe('no storm');
      expect(app.logs()).not.toContain('unhandled error in request');
    }
  });
});
