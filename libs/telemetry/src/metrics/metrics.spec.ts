import { createApiMetrics, createWorkerMetrics, UNMATCHED_ROUTE } from './index';
import { API_METRIC_NAMES, METRIC, WORKER_METRIC_NAMES } from './metric-names';
import { OTHER_FAILURE_OUTCOME, RUN_OUTCOMES, runOutcomeLabel } from './label-values';

/** Names of every metric family in an exposition (from its `# TYPE` lines). */
function families(text: string): Set<string> {
  return new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
}

/** Label values of every sample line of `name`. */
function labelValues(text: string, name: string): string[] {
  const lines = text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name}_bucket{`) || l.startsWith(`${name}_count{`));
  return lines.flatMap((l) => [...l.matchAll(/="([^"]*)"/g)].map((m) => m[1]));
}

describe('metric names', () => {
  it('are unique, prefixed, and carry a unit or _total where they count or time', () => {
    const all = Object.values(METRIC);
    expect(new Set(all).size).toBe(all.length);
    for (const name of all) expect(name).toMatch(/^codemode_[a-z_]+$/);
    for (const name of all.filter((n) => n.includes('duration') || n.includes('age') || n.includes('schedule')))
      expect(name).toMatch(/_seconds$/);
    expect(new Set([...API_METRIC_NAMES, ...WORKER_METRIC_NAMES])).toEqual(new Set(all));
  });
});

describe('createApiMetrics', () => {
  it('exposes every API metric, the build info and the Node default metrics', async () => {
    const metrics = createApiMetrics('1.2.3');
    metrics.httpRequestDuration.observe({ method: 'GET', route: UNMATCHED_ROUTE, status: '404' }, 0.01);
    const text = await metrics.scrape();
    const names = families(text);
    for (const name of API_METRIC_NAMES) expect(names).toContain(name);
    expect(names).toContain('process_cpu_seconds_total');
    expect(names).toContain('nodejs_eventloop_lag_seconds');
    expect(text).toContain('codemode_build_info{version="1.2.3"} 1');
    // Both processes refuse at tenant quotas (SPEC §10) and count Redis failures; the rest is each one's own.
    const shared = new Set<string>([METRIC.buildInfo, METRIC.tenantLimitedTotal, METRIC.storeFailuresTotal]);
    for (const name of WORKER_METRIC_NAMES.filter((n) => !shared.has(n))) expect(names).not.toContain(name);
  });

  it('counts tenant quota refusals by limit, with a tenant label only when asked', async () => {
    const plain = createApiMetrics('1');
    plain.tenantLimitedOnce('inflight', 'alpha');
    const plainText = await plain.scrape();
    expect(plainText).toContain('codemode_tenant_limited_total{limit="inflight"} 1');
    expect(plainText).toContain('codemode_tenant_limited_total{limit="rate"} 0');
    expect(plainText).not.toContain('tenant="alpha"');
    const labelled = createApiMetrics('1', { tenantLabel: true });
    labelled.tenantLimitedOnce('rate', 'alpha');
    expect(await labelled.scrape()).toContain('codemode_tenant_limited_total{limit="rate",tenant="alpha"} 1');
  });

  it('sets queue gauges per queue and state, and ages the oldest waiting job in seconds', async () => {
    const metrics = createApiMetrics('1');
    metrics.setQueue('cells', { waiting: 3, active: 1 }, 10_000, 12_500);
    const text = await metrics.scrape();
    expect(text).toContain('codemode_queue_jobs{queue="cells",state="waiting"} 3');
    expect(text).toContain('codemode_queue_jobs{queue="cells",state="active"} 1');
    expect(text).toContain('codemode_queue_jobs{queue="shell",state="waiting"} 0');
    expect(text).toContain('codemode_queue_oldest_waiting_age_seconds{queue="cells"} 2.5');
    expect(text).toContain('codemode_queue_oldest_waiting_age_seconds{queue="shell"} 0');
  });

  it('runs collectors before a scrape, and a failing or hung one does not fail it', async () => {
    const metrics = createApiMetrics('1');
    metrics.addCollector(() => metrics.setQueue('shell', { waiting: 7 }, null));
    metrics.addCollector(() => Promise.reject(new Error('redis down')));
    const text = await metrics.scrape();
    expect(text).toContain('codemode_queue_jobs{queue="shell",state="waiting"} 7');
  });
});

describe('createWorkerMetrics', () => {
  it('exposes every worker metric with its bounded label sets at zero before any event', async () => {
    const text = await createWorkerMetrics('1').scrape();
    const names = families(text);
    for (const name of WORKER_METRIC_NAMES) expect(names).toContain(name);
    expect(names).toContain('process_resident_memory_bytes');
    expect(text).toContain('codemode_resumes_total{path="replay"} 0');
    expect(text).toContain('codemode_tool_calls_total{source="mcp",outcome="error"} 0');
    expect(text).toContain('codemode_replay_duration_seconds_count 0');
    expect(text).toContain('codemode_stale_writes_rejected_total 0');
    expect(text).toContain('codemode_job_schedule_to_start_seconds_count{queue="worker"} 0');
  });

  it('records run answers by outcome with their duration', async () => {
    const metrics = createWorkerMetrics('1');
    expect(metrics.runAnswered({ status: 'failed', code: 'timeout' }, 1_000, 3_000)).toBe('failed_timeout');
    metrics.runAnswered({ status: 'completed' }, 1_000, 1_250);
    const text = await metrics.scrape();
    expect(text).toContain('codemode_runs_total{outcome="failed_timeout"} 1');
    expect(text).toContain('codemode_run_duration_seconds_sum{outcome="failed_timeout"} 2');
    expect(text).toContain('codemode_run_duration_seconds_sum{outcome="completed"} 0.25');
  });

  it('counts failures by code and failure phase, telling the model code from the service (SPEC §19)', async () => {
    const metrics = createWorkerMetrics('1');
    const before = await metrics.scrape();
    expect(before).toContain('codemode_runs_failed_total{code="internal_error",failure_phase="host"} 0');
    expect(before).toContain('codemode_runs_failed_total{code="internal_error",failure_phase="guest"} 0');
    metrics.runAnswered({ status: 'failed', code: 'internal_error', failurePhase: 'guest' }, 0, 1);
    metrics.runAnswered({ status: 'failed', code: 'internal_error', failurePhase: 'guest' }, 0, 1);
    metrics.runAnswered({ status: 'failed', code: 'internal_error', failurePhase: 'host' }, 0, 1);
    metrics.runAnswered({ status: 'failed', code: 'not-a-code', failurePhase: 'nowhere' }, 0, 1);
    metrics.runAnswered({ status: 'completed' }, 0, 1);
    const text = await metrics.scrape();
    expect(text).toContain('codemode_runs_failed_total{code="internal_error",failure_phase="guest"} 2');
    expect(text).toContain('codemode_runs_failed_total{code="internal_error",failure_phase="host"} 1');
    // Outside the closed sets: `other`, and a failure of no known phase counts against the service.
    expect(text).toContain('codemode_runs_failed_total{code="other",failure_phase="host"} 1');
    expect(text).toContain('codemode_runs_total{outcome="failed_internal_error"} 3');
  });

  it('records claims, tool calls, resumes and scrape-time gauges', async () => {
    const metrics = createWorkerMetrics('1');
    metrics.jobClaimed('cells', 1_000, 1_050);
    metrics.toolCalled('openclaw', true, 20);
    metrics.toolCalled('client', false);
    metrics.resumed('owner');
    metrics.setGauges({
      sandbox: { busy: 1, idle: 2, starting: 0, parked: 5, parkedMemoryBytes: 5 * 16_777_216 },
      maxParked: 64,
      shell: { running: 1, finished: 4 },
    });
    const text = await metrics.scrape();
    expect(text).toContain('codemode_job_schedule_to_start_seconds_sum{queue="cells"} 0.05');
    expect(text).toContain('codemode_tool_calls_total{source="openclaw",outcome="ok"} 1');
    expect(text).toContain('codemode_tool_calls_total{source="client",outcome="error"} 1');
    expect(text).toContain('codemode_tool_call_duration_seconds_count{source="client"} 0');
    expect(text).toContain('codemode_resumes_total{path="owner"} 1');
    expect(text).toContain('codemode_parked_runs 5');
    expect(text).toContain('codemode_parked_slots_available 59');
    expect(text).toContain('codemode_parked_memory_bytes 83886080');
    expect(text).toContain('codemode_sandbox_threads{state="idle"} 2');
    expect(text).toContain('codemode_shell_sessions{state="finished"} 4');
  });

  it('counts MCP servers by state, every state present at zero before any server reports', async () => {
    const metrics = createWorkerMetrics('1');
    const before = await metrics.scrape();
    for (const state of ['connected', 'connecting', 'down']) expect(before).toContain(`codemode_mcp_servers{state="${state}"} 0`);
    metrics.setMcpServers({ connected: 2, down: 1 });
    const text = await metrics.scrape();
    expect(text).toContain('codemode_mcp_servers{state="connected"} 2');
    expect(text).toContain('codemode_mcp_servers{state="connecting"} 0');
    expect(text).toContain('codemode_mcp_servers{state="down"} 1');
  });

  it('keeps every label value inside its closed set', async () => {
    const metrics = createWorkerMetrics('1');
    metrics.runAnswered({ status: 'failed', code: 'cm_0123456789abcdef' }, 0, 1);
    const text = await metrics.scrape();
    const allowed = new Set<string>(RUN_OUTCOMES);
    for (const value of labelValues(text, METRIC.runsTotal)) expect(allowed).toContain(value);
    expect(text).not.toContain('cm_');
  });
});

describe('runOutcomeLabel', () => {
  it('maps completed, waiting and failed codes, and folds unknown codes into failed_other', () => {
    expect(runOutcomeLabel({ status: 'completed' })).toBe('completed');
    expect(runOutcomeLabel({ status: 'waiting' })).toBe('waiting');
    expect(runOutcomeLabel({ status: 'failed', code: 'aborted' })).toBe('failed_aborted');
    expect(runOutcomeLabel({ status: 'failed', code: 'internal_error' })).toBe('failed_internal_error');
    expect(runOutcomeLabel({ status: 'failed' })).toBe(OTHER_FAILURE_OUTCOME);
    expect(runOutcomeLabel({ status: 'failed', code: 'something new' })).toBe(OTHER_FAILURE_OUTCOME);
  });
});
