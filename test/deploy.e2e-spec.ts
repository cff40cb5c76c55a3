import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { loadConfig } from '@codemode/config';
import { API_METRIC_NAMES, WORKER_METRIC_NAMES } from '@codemode/telemetry';
import {
  byKind,
  compose,
  DEPLOY,
  filesUnder,
  manifests,
  matches,
  named,
  resources,
  ROOT,
  service,
  workloads,
  workloadsSelectedBy,
  type Obj,
} from './utils/deploy-manifests';
import { baseMetricName, metricNamesIn } from './utils/promql-metrics';

/*
 * Static checks of deploy/ (no cluster, no running stack): every manifest has the fields
 * Kubernetes requires and the ones this service depends on (probes, grace period, resources,
 * selectors that match), and every PromQL expression uses only metrics the service exports.
 */

/** Longest cell budget (SPEC §3: timeoutMs clamps at 60 s): pods must outlive a draining cell. */
const MAX_CELL_BUDGET_SECONDS = 60;

/** Metrics the service does not define but may be queried: Prometheus' own `up`, and the Node
 * default metrics prom-client adds to both registries (checked against prom-client below). */
const PROMETHEUS_METRICS = ['up'];
const NODE_DEFAULT_METRICS = ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_p99_seconds'];
const EXPORTED = new Set<string>([...API_METRIC_NAMES, ...WORKER_METRIC_NAMES, ...NODE_DEFAULT_METRICS, ...PROMETHEUS_METRICS]);

function containerPorts(workload: Obj): Array<{ name?: string; containerPort: number }> {
  return workload.spec.template.spec.containers.flatMap((c: Obj) => c.ports ?? []);
}

function portExists(workload: Obj, port: string | number): boolean {
  return containerPorts(workload).some((p) => p.name === port || p.containerPort === port);
}

describe('deploy/ manifests', () => {
  it('parse, and every resource has apiVersion, kind and metadata.name', () => {
    expect(resources.length).toBeGreaterThan(10);
    for (const { file, doc } of resources) {
      expect({ file, apiVersion: typeof doc.apiVersion, kind: typeof doc.kind, name: typeof doc.metadata?.name }).toEqual({
        file,
        apiVersion: 'string',
        kind: 'string',
        name: 'string',
      });
    }
  });

  it('list every manifest file in the kustomization (besides the Secret example)', () => {
    const kustomization = manifests.find((m) => m.doc.kind === 'Kustomization')!;
    const dir = join(ROOT, 'deploy', 'kubernetes');
    const listed = (kustomization.doc.resources as string[]).map((r) => join(dir, r)).sort();
    const files = filesUnder(dir, /\.ya?ml$/)
      .filter((f) => !/kustomization|\.example\./.test(f))
      .sort();
    expect(listed).toEqual(files);
  });

  it('give every workload selectors that match its pods, and images and resources to every container', () => {
    expect(
      workloads()
        .map((w) => w.metadata.name)
        .sort(),
    ).toEqual(['codemode-api', 'codemode-redis', 'codemode-redis-cluster', 'codemode-worker']);
    for (const w of workloads()) {
      expect(matches(w.spec.selector.matchLabels, w.spec.template.metadata.labels)).toBe(true);
      for (const c of w.spec.template.spec.containers) {
        expect({ workload: w.metadata.name, container: c.name, image: typeof c.image }).toEqual({
          workload: w.metadata.name,
          container: c.name,
          image: 'string',
        });
        expect(c.resources.requests).toEqual({ cpu: expect.anything(), memory: expect.anything() });
        expect(c.resources.limits).toEqual({ cpu: expect.anything(), memory: expect.anything() });
        expect(c.livenessProbe).toBeDefined();
        expect(c.readinessProbe).toBeDefined();
      }
    }
  });

  it.each([
    ['api', 'http', 3000, 9465],
    ['worker', 'metrics', 9464, 9464],
  ] as const)(
    'probe the %s on /health/live and /health/ready of its port %s (%d), scrape it on %d',
    (name, portName, portNumber, metricsPort) => {
      const deployment = service(name);
      const [container] = deployment.spec.template.spec.containers;
      expect(containerPorts(deployment)).toContainEqual({ name: portName, containerPort: portNumber });
      expect(container.livenessProbe.httpGet).toEqual({ path: '/health/live', port: portName });
      expect(container.readinessProbe.httpGet).toEqual({ path: '/health/ready', port: portName });
      expect(container.command.join(' ')).toContain(`dist/apps/${name}/src/main.js`);
      expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(MAX_CELL_BUDGET_SECONDS);
      expect(deployment.spec.template.metadata.annotations).toMatchObject({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': String(metricsPort),
        'prometheus.io/path': '/metrics',
      });
    },
  );

  it('configure api and worker from the ConfigMap and each its own Secret, with HOST=0.0.0.0', () => {
    const config = named('ConfigMap', 'codemode-config')!;
    expect(config.data).toMatchObject({ HOST: '0.0.0.0', WORKER_METRICS_PORT: '9464', API_METRICS_PORT: '9465', PORT: '3000' });
    // Every value is a string: Kubernetes refuses numbers and booleans in ConfigMap data.
    for (const value of Object.values(config.data)) expect(typeof value).toBe('string');
    expect(service('api').spec.template.spec.containers[0].envFrom).toEqual([
      { configMapRef: { name: 'codemode-config' } },
      { secretRef: { name: 'codemode-api' } },
    ]);
    expect(service('worker').spec.template.spec.containers[0].envFrom).toEqual([
      { configMapRef: { name: 'codemode-config' } },
      { secretRef: { name: 'codemode-worker', optional: true } },
    ]);
  });

  it('give api and worker a PodDisruptionBudget selecting exactly their pods', () => {
    const pdbs = byKind('PodDisruptionBudget');
    for (const name of ['codemode-api', 'codemode-worker']) {
      const pdb = pdbs.find((p) => p.metadata.name === name)!;
      expect(pdb.apiVersion).toBe('policy/v1');
      expect(pdb.spec.minAvailable ?? pdb.spec.maxUnavailable).toBeDefined();
      expect(workloadsSelectedBy(pdb.spec.selector.matchLabels).map((w) => w.metadata.name)).toEqual([name]);
    }
  });

  it('point every Service at one workload and one of its ports', () => {
    for (const svc of byKind('Service')) {
      const [target, ...others] = workloadsSelectedBy(svc.spec.selector);
      expect({ service: svc.metadata.name, others: others.length, found: target !== undefined }).toEqual({
        service: svc.metadata.name,
        others: 0,
        found: true,
      });
      for (const port of svc.spec.ports) expect(portExists(target, port.targetPort)).toBe(true);
    }
  });

  it('scrape each Service a ServiceMonitor names through a port it has', () => {
    const monitors = byKind('ServiceMonitor');
    expect(monitors).toHaveLength(2);
    for (const monitor of monitors) {
      const svc = byKind('Service').find((s) => matches(monitor.spec.selector.matchLabels, s.metadata.labels ?? {}))!;
      expect(svc).toBeDefined();
      for (const endpoint of monitor.spec.endpoints) {
        expect(svc.spec.ports.map((p: Obj) => p.name)).toContain(endpoint.port);
        expect(endpoint.path).toBe('/metrics');
      }
    }
  });

  it('scale the worker Deployment with KEDA, never below two', () => {
    const [scaled] = byKind('ScaledObject');
    expect(scaled.apiVersion).toBe('keda.sh/v1alpha1');
    expect(named('Deployment', scaled.spec.scaleTargetRef.name)).toBe(service('worker'));
    expect(scaled.spec.minReplicaCount).toBeGreaterThanOrEqual(2);
    expect(scaled.spec.maxReplicaCount).toBeGreaterThan(scaled.spec.minReplicaCount);
    expect(scaled.spec.triggers.length).toBeGreaterThan(0);
    // KEDA owns the replica count; a static one would fight its HPA on every apply.
    expect(service('worker').spec.replicas).toBeUndefined();
  });

  it('target the cells one worker runs at once (CODEMODE_CELL_CONCURRENCY) in the KEDA trigger', () => {
    const container = service('worker').spec.template.spec.containers[0];
    const env: Record<string, string> = { ...named('ConfigMap', 'codemode-config')!.data };
    for (const e of (container.env ?? []) as Obj[]) if (typeof e.value === 'string') env[e.name] = e.value;
    // Unset, the default would follow the cores of whatever node runs the pod.
    expect(env.CODEMODE_CELL_CONCURRENCY ?? env.CODEMODE_SANDBOX_THREADS).toBeDefined();
    const { cellConcurrency } = loadConfig(env);
    const [scaled] = byKind('ScaledObject');
    for (const trigger of scaled.spec.triggers) expect(Number(trigger.metadata.threshold)).toBe(cellConcurrency);
  });

  it('run Redis (StatefulSet here, docker-compose locally) with appendonly and noeviction', () => {
    const redisConf = named('ConfigMap', 'codemode-redis')!.data['redis.conf'] as string;
    expect(redisConf).toMatch(/^appendonly yes$/m);
    expect(redisConf).toMatch(/^maxmemory-policy noeviction$/m);
    const redis = named('StatefulSet', 'codemode-redis')!;
    expect(redis.spec.volumeClaimTemplates[0].metadata.name).toBe('data');

    const { services } = compose();
    expect(services.redis.command.join(' ')).toMatch(/--appendonly yes.*--maxmemory-policy noeviction/);
    expect(services.worker.deploy.replicas).toBe(2);
    expect(services.api.environment).toMatchObject({ HOST: '0.0.0.0' });
  });

  it('offer a Redis Cluster (SPEC §13): 3 primaries with a replica each, AOF, noeviction, the ACL user, in Kubernetes and compose', () => {
    const conf = named('ConfigMap', 'codemode-redis-cluster')!.data['redis.conf'] as string;
    for (const line of ['appendonly yes', 'maxmemory-policy noeviction', 'cluster-enabled yes'])
      expect(conf).toMatch(new RegExp(`^${line}$`, 'm'));
    const nodes = named('StatefulSet', 'codemode-redis-cluster')!;
    expect(nodes.spec.replicas).toBe(6);
    const command = (nodes.spec.template.spec.containers[0].command as string[]).join(' ');
    expect(command).toMatch(/--user default off/);
    expect(command).toMatch(/--masteruser codemode --masterauth "\$REDIS_PASSWORD"/);
    const create = (named('Job', 'codemode-redis-cluster-create')!.spec.template.spec.containers[0].command as string[]).join(' ');
    expect(create).toMatch(/--cluster create .*--cluster-replicas 1/);

    // The overlay: the base plus the cluster, the single Redis removed, api and workers pointed at the cluster.
    const overlay = manifests.find((m) => m.file === join('deploy', 'redis-cluster', 'kustomization.yaml'))!.doc;
    expect(overlay.resources).toEqual(['../kubernetes', 'redis-cluster.yaml']);
    const patches = (overlay.patches as Obj[]).map((p) => String(p.patch));
    for (const kind of ['StatefulSet', 'Service', 'ConfigMap'])
      expect(patches.some((p) => p.includes('$patch: delete') && p.includes(`kind: ${kind}`) && p.includes('name: codemode-redis }'))).toBe(
        true,
      );
    const env = patches.find((p) => p.includes('REDIS_CLUSTER_NODES'))!;
    for (let n = 0; n < 6; n += 1) expect(env).toContain(`codemode-redis-cluster-${n}.codemode-redis-cluster:6379`);
    expect(env).toContain('name: REDIS_USERNAME, value: codemode');

    // Compose: an override file with the same settings, the single Redis out of the default start.
    const cluster = parseYaml(readFileSync(join(ROOT, 'docker-compose.redis-cluster.yml'), 'utf8'), {
      merge: true,
      customTags: [{ tag: '!override', collection: 'map', resolve: (value: unknown) => value }],
    }) as Obj;
    expect(cluster.services.redis.profiles).toEqual(['single-redis']);
    const redisNodes = Object.keys(cluster.services).filter((name) => /^redis-\d$/.test(name));
    expect(redisNodes).toHaveLength(6);
    const nodeCommand = (cluster.services['redis-1'].command as string[]).join(' ');
    expect(nodeCommand).toMatch(/--appendonly yes --maxmemory-policy noeviction --cluster-enabled yes/);
    expect(nodeCommand).toMatch(/--user default off/);
    for (const role of ['api', 'worker']) {
      expect(cluster.services[role].environment).toMatchObject({
        REDIS_USERNAME: 'codemode',
        REDIS_PASSWORD: expect.stringMatching(/^\$\{REDIS_PASSWORD:\?/),
      });
      expect(cluster.services[role].environment.REDIS_CLUSTER_NODES.split(',')).toEqual(redisNodes.map((name) => `${name}:6379`));
    }
  });
});

function promqlExpressions(): Array<{ where: string; expr: string }> {
  const out: Array<{ where: string; expr: string }> = [];
  for (const rule of byKind('PrometheusRule')) {
    for (const group of rule.spec.groups) for (const r of group.rules) out.push({ where: `rule ${r.alert ?? r.record}`, expr: r.expr });
  }
  for (const scaled of byKind('ScaledObject')) {
    for (const trigger of scaled.spec.triggers)
      if (trigger.type === 'prometheus') out.push({ where: 'keda', expr: trigger.metadata.query });
  }
  for (const file of filesUnder(join(DEPLOY, 'grafana'), /\.json$/)) {
    const dashboard = JSON.parse(readFileSync(file, 'utf8')) as Obj;
    for (const panel of dashboard.panels)
      for (const target of panel.targets ?? []) out.push({ where: `panel ${panel.title}`, expr: target.expr });
  }
  return out;
}

describe('deploy/ alerts, scaler and dashboard', () => {
  it('use only metrics the api and workers export', () => {
    const expressions = promqlExpressions();
    expect(expressions.length).toBeGreaterThan(20);
    const unknown: string[] = [];
    for (const { where, expr } of expressions) {
      const names = metricNamesIn(expr);
      expect({ where, found: names.length > 0 }).toEqual({ where, found: true });
      for (const name of names) if (!EXPORTED.has(baseMetricName(name, EXPORTED))) unknown.push(`${where}: ${name}`);
    }
    expect(unknown).toEqual([]);
  });

  it('whitelist only Node default metrics prom-client really produces', async () => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name);
    expect(names).toEqual(expect.arrayContaining(NODE_DEFAULT_METRICS));
    registry.clear();
  });

  it('cover the alerts the runbook needs, each with a severity and a summary', () => {
    const rules = byKind('PrometheusRule').flatMap((r) => r.spec.groups.flatMap((g: Obj) => g.rules as Obj[]));
    const exprs = rules.map((r) => r.expr as string).join('\n');
    for (const metric of [
      'codemode_job_schedule_to_start_seconds_bucket',
      'codemode_queue_oldest_waiting_age_seconds',
      'codemode_sandbox_threads{state="idle"}',
      'codemode_stale_writes_rejected_total',
      'route="/health/ready",status="503"',
      // SPEC §19: service bugs, not the model's own errors.
      'codemode_runs_failed_total{code="internal_error",failure_phase="host"}',
    ]) {
      expect(exprs).toContain(metric);
    }
    for (const rule of rules) {
      expect({ alert: rule.alert, severity: rule.labels?.severity, summary: typeof rule.annotations?.summary }).toEqual({
        alert: expect.any(String),
        severity: expect.stringMatching(/^(warning|critical)$/),
        summary: 'string',
      });
    }
  });

  it('give the dashboard a uid, a datasource variable and non-overlapping panels', () => {
    const dashboard = JSON.parse(readFileSync(join(DEPLOY, 'grafana', 'codemode-dashboard.json'), 'utf8')) as Obj;
    expect(dashboard).toMatchObject({ uid: 'codemode-backend', title: expect.any(String), schemaVersion: expect.any(Number) });
    expect(dashboard.templating.list).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource' }));
    const cells = new Set<string>();
    for (const panel of dashboard.panels) {
      const { x, y, w, h } = panel.gridPos;
      expect(x + w).toBeLessThanOrEqual(24);
      for (let dx = 0; dx < w; dx += 1) {
        for (let dy = 0; dy < h; dy += 1) {
          const cell = `${x + dx},${y + dy}`;
          expect({ panel: panel.title, cell, taken: cells.has(cell) }).toEqual({ panel: panel.title, cell, taken: false });
          cells.add(cell);
        }
      }
    }
    expect(new Set(dashboard.panels.map((p: Obj) => p.id)).size).toBe(dashboard.panels.length);
  });
});

describe('metricNamesIn', () => {
  it('finds metric names and skips functions, labels, ranges, grouping and variables', () => {
    expect(
      metricNamesIn(
        'histogram_quantile(0.99, sum by (le, queue) (rate(codemode_x_bucket{queue="cells",a=~"b|c"}[$__rate_interval]))) > 0.2',
      ),
    ).toEqual(['codemode_x_bucket']);
    expect(metricNamesIn('sum(a_total) / ignoring(pod) group_left b offset 5m and on (x) up == 0')).toEqual(['a_total', 'b', 'up']);
    expect(metricNamesIn('absent(codemode_nope{state="idle"})')).toEqual(['codemode_nope']);
  });

  it('maps histogram series to their base name only when the base is known', () => {
    const known = new Set(['codemode_run_duration_seconds', 'codemode_runs_total']);
    expect(baseMetricName('codemode_run_duration_seconds_bucket', known)).toBe('codemode_run_duration_seconds');
    expect(baseMetricName('codemode_runs_total', known)).toBe('codemode_runs_total');
    expect(baseMetricName('codemode_nope_count', known)).toBe('codemode_nope_count');
  });
});
