import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { loadConfig } from '@codemode/config';
import { API_METRIC_NAMES, WORKER_METRIC_NAMES } from '@codemode/telemetry';
import { baseMetricName, metricNamesIn } from './utils/promql-metrics';

/*
 * Static checks of deploy/ (no cluster, no running stack): every manifest has the fields
 * Kubernetes requires and the ones this service depends on (probes, grace period, resources,
 * selectors that match), and every PromQL expression uses only metrics the service exports.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed YAML and JSON: the assertions are the type check
type Obj = Record<string, any>;

const ROOT = join(__dirname, '..');
const DEPLOY = join(ROOT, 'deploy');
/** Longest cell budget (SPEC §3: timeoutMs clamps at 60 s): pods must outlive a draining cell. */
const MAX_CELL_BUDGET_SECONDS = 60;

/** Metrics the service does not define but may be queried: Prometheus' own `up`, and the Node
 * default metrics prom-client adds to both registries (checked against prom-client below). */
const PROMETHEUS_METRICS = ['up'];
const NODE_DEFAULT_METRICS = ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_p99_seconds'];
const EXPORTED = new Set<string>([...API_METRIC_NAMES, ...WORKER_METRIC_NAMES, ...NODE_DEFAULT_METRICS, ...PROMETHEUS_METRICS]);

function filesUnder(dir: string, ext: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(full, ext);
    return ext.test(entry.name) ? [full] : [];
  });
}

interface Manifest {
  file: string;
  doc: Obj;
}

function loadManifests(): Manifest[] {
  return filesUnder(DEPLOY, /\.ya?ml$/).flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8')).map((parsed) => {
      if (parsed.errors.length > 0) throw parsed.errors[0];
      return { file: relative(ROOT, file), doc: parsed.toJS() as Obj };
    }),
  );
}

const manifests = loadManifests();
const resources = manifests.filter((m) => m.doc.kind !== 'Kustomization');
const byKind = (kind: string): Obj[] => resources.filter((m) => m.doc.kind === kind).map((m) => m.doc);
const workloads = (): Obj[] => [...byKind('Deployment'), ...byKind('StatefulSet')];
const named = (kind: string, name: string): Obj | undefined => byKind(kind).find((d) => d.metadata.name === name);

function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** The workloads whose pods a label selector picks. */
function workloadsSelectedBy(selector: Record<string, string>): Obj[] {
  return workloads().filter((w) => matches(selector, w.spec.template.metadata.labels ?? {}));
}

function containerPorts(workload: Obj): Array<{ name?: string; containerPort: number }> {
  return workload.spec.template.spec.containers.flatMap((c: Obj) => c.ports ?? []);
}

function portExists(workload: Obj, port: string | number): boolean {
  return containerPorts(workload).some((p) => p.name === port || p.containerPort === port);
}

function service(name: 'api' | 'worker'): Obj {
  return named('Deployment', `codemode-${name}`)!;
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
    const files = filesUnder(dir, /\.ya?ml$/).filter((f) => !/kustomization|\.example\./.test(f)).sort();
    expect(listed).toEqual(files);
  });

  it('give every workload selectors that match its pods, and images and resources to every container', () => {
    expect(workloads().map((w) => w.metadata.name).sort()).toEqual(['codemode-api', 'codemode-redis', 'codemode-worker']);
    for (const w of workloads()) {
      expect(matches(w.spec.selector.matchLabels, w.spec.template.metadata.labels)).toBe(true);
      for (const c of w.spec.template.spec.containers) {
        expect({ workload: w.metadata.name, container: c.name, image: typeof c.image }).toEqual({ workload: w.metadata.name, container: c.name, image: 'string' });
        expect(c.resources.requests).toEqual({ cpu: expect.anything(), memory: expect.anything() });
        expect(c.resources.limits).toEqual({ cpu: expect.anything(), memory: expect.anything() });
        expect(c.livenessProbe).toBeDefined();
        expect(c.readinessProbe).toBeDefined();
      }
    }
  });

  it.each([
    ['api', 'http', 3000],
    ['worker', 'metrics', 9464],
  ] as const)('probe the %s on /health/live and /health/ready of its port %s (%d)', (name, portName, portNumber) => {
    const deployment = service(name);
    const [container] = deployment.spec.template.spec.containers;
    expect(containerPorts(deployment)).toContainEqual({ name: portName, containerPort: portNumber });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/health/live', port: portName });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/health/ready', port: portName });
    expect(container.command.join(' ')).toContain(`dist/apps/${name}/src/main.js`);
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(MAX_CELL_BUDGET_SECONDS);
    expect(deployment.spec.template.metadata.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(portNumber),
      'prometheus.io/path': '/metrics',
    });
  });

  it('configure api and worker from the ConfigMap and each its own Secret, with HOST=0.0.0.0', () => {
    const config = named('ConfigMap', 'codemode-config')!;
    expect(config.data).toMatchObject({ HOST: '0.0.0.0', WORKER_METRICS_PORT: '9464', PORT: '3000' });
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
      expect({ service: svc.metadata.name, others: others.length, found: target !== undefined }).toEqual({ service: svc.metadata.name, others: 0, found: true });
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
});

/** Everything a container's environment gets: its `env` names and the keys of what `envFrom` pulls in. */
function environmentOf(container: Obj): string[] {
  const names = (container.env ?? []).map((e: Obj) => e.name as string);
  for (const source of container.envFrom ?? []) {
    const from = source.secretRef ? named('Secret', source.secretRef.name) : named('ConfigMap', source.configMapRef.name);
    expect({ envFrom: source, found: from !== undefined }).toEqual({ envFrom: source, found: true });
    names.push(...Object.keys(from!.stringData ?? from!.data ?? {}));
  }
  return names;
}

const compose = (): Obj => parseYaml(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as Obj;
const PRIVATE_V4 = ['10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.168.0.0/16'];
const PRIVATE_V6 = ['::1/128', 'fc00::/7', 'fe80::/10'];

describe('deploy/ secrets and network (SPEC §10 "Deployment")', () => {
  it('require a password for Redis: ACL user codemode, default user off, password from a Secret', () => {
    const redis = named('StatefulSet', 'codemode-redis')!.spec.template.spec.containers[0];
    const command = (redis.command as string[]).join(' ');
    expect(command).toMatch(/--user default off/);
    expect(command).toMatch(/--user codemode on ">\$REDIS_PASSWORD"/);
    expect(redis.env).toContainEqual({ name: 'REDIS_PASSWORD', valueFrom: { secretKeyRef: { name: 'codemode-redis-auth', key: 'password' } } });
    for (const probe of [redis.livenessProbe, redis.readinessProbe]) {
      expect(probe.exec.command.join(' ')).toMatch(/REDISCLI_AUTH="\$REDIS_PASSWORD" redis-cli .*--user codemode ping/);
    }
    expect(Object.keys(named('Secret', 'codemode-redis-auth')!.stringData)).toEqual(['password']);
  });

  it('build REDIS_URL from the Secret in api and worker, and keep credentials out of every ConfigMap', () => {
    for (const name of ['api', 'worker'] as const) {
      const env = service(name).spec.template.spec.containers[0].env as Obj[];
      const at = (n: string): number => env.findIndex((e) => e.name === n);
      expect(env[at('REDIS_PASSWORD')]).toEqual({ name: 'REDIS_PASSWORD', valueFrom: { secretKeyRef: { name: 'codemode-redis-auth', key: 'password' } } });
      expect(env[at('REDIS_URL')]).toEqual({ name: 'REDIS_URL', value: 'redis://codemode:$(REDIS_PASSWORD)@codemode-redis:6379' });
      // Kubernetes expands $(VAR) only from variables declared before it.
      expect(at('REDIS_PASSWORD')).toBeLessThan(at('REDIS_URL'));
    }
    for (const map of byKind('ConfigMap')) {
      for (const [key, value] of Object.entries(map.data as Record<string, string>)) {
        expect({ map: map.metadata.name, key, secret: /API_KEYS|SECRET|PASSWORD|REDIS_URL/.test(key) || /^\s*(requirepass|user )/m.test(value) }).toEqual({
          map: map.metadata.name,
          key,
          secret: false,
        });
      }
    }
  });

  it('give the API keys to the api only: the worker gets Redis and the webhook secrets, never CODEMODE_API_KEYS', () => {
    const api = environmentOf(service('api').spec.template.spec.containers[0]);
    const worker = environmentOf(service('worker').spec.template.spec.containers[0]);
    expect(api).toEqual(expect.arrayContaining(['CODEMODE_API_KEYS', 'REDIS_URL']));
    expect(api).not.toContain('CODEMODE_WEBHOOK_SECRETS');
    expect(worker).toEqual(expect.arrayContaining(['CODEMODE_WEBHOOK_SECRETS', 'REDIS_URL']));
    expect(worker).not.toContain('CODEMODE_API_KEYS');
    expect(Object.keys(named('Secret', 'codemode-worker')!.stringData)).toEqual(['CODEMODE_WEBHOOK_SECRETS']);
  });

  it('mount no service-account token in any pod', () => {
    for (const w of workloads()) {
      expect({ workload: w.metadata.name, automount: w.spec.template.spec.automountServiceAccountToken }).toEqual({
        workload: w.metadata.name,
        automount: false,
      });
    }
  });

  it('let only api and worker pods reach Redis, on its port', () => {
    const policy = byKind('NetworkPolicy').find((p) => workloadsSelectedBy(p.spec.podSelector.matchLabels).includes(named('StatefulSet', 'codemode-redis')!))!;
    expect(policy.spec.policyTypes).toContain('Ingress');
    expect(policy.spec.ingress).toHaveLength(1);
    const [rule] = policy.spec.ingress;
    const peers = (rule.from as Obj[]).flatMap((peer) => {
      expect(peer.ipBlock ?? peer.namespaceSelector).toBeUndefined();
      return workloadsSelectedBy(peer.podSelector.matchLabels).map((w) => w.metadata.name as string);
    });
    expect(peers.sort()).toEqual(['codemode-api', 'codemode-worker']);
    expect(rule.ports).toEqual([{ protocol: 'TCP', port: 6379 }]);
  });

  it('keep workers to Redis, DNS and public addresses (webhooks): no private, link-local or loopback range', () => {
    const policy = byKind('NetworkPolicy').find((p) => workloadsSelectedBy(p.spec.podSelector.matchLabels).includes(service('worker')))!;
    expect(policy.spec.policyTypes).toContain('Egress');
    const rules = policy.spec.egress as Obj[];
    for (const rule of rules) expect(rule.to?.length).toBeGreaterThan(0); // a rule without `to` allows every destination
    const redis = rules.find((r) => r.to.some((t: Obj) => t.podSelector?.matchLabels?.['app.kubernetes.io/name'] === 'codemode-redis'))!;
    expect(redis.ports).toEqual([{ protocol: 'TCP', port: 6379 }]);
    const dns = rules.find((r) => r.to.some((t: Obj) => t.podSelector?.matchLabels?.['k8s-app'] === 'kube-dns'))!;
    expect(dns.to[0].namespaceSelector.matchLabels).toEqual({ 'kubernetes.io/metadata.name': 'kube-system' });
    expect(dns.ports.map((p: Obj) => p.port)).toEqual([53, 53]);
    const blocks = rules.flatMap((r) => r.to.filter((t: Obj) => t.ipBlock).map((t: Obj) => t.ipBlock as Obj));
    expect(blocks.map((b) => b.cidr).sort()).toEqual(['0.0.0.0/0', '::/0']);
    expect(blocks.find((b) => b.cidr === '0.0.0.0/0')!.except).toEqual(expect.arrayContaining(PRIVATE_V4));
    expect(blocks.find((b) => b.cidr === '::/0')!.except).toEqual(expect.arrayContaining(PRIVATE_V6));
    // Every other peer is the Redis or the DNS one.
    expect(rules.flatMap((r) => r.to as Obj[]).length).toBe(redis.to.length + dns.to.length + blocks.length);
  });

  it('compose: Redis needs a password, no default API key, API on 127.0.0.1, no API keys for workers', () => {
    const { redis, api, worker } = compose().services;
    const command = (redis.command as string[]).join(' ');
    expect(command).toMatch(/--user default off/);
    expect(command).toMatch(/--user codemode on ">\$\$REDIS_PASSWORD"/);
    expect(redis.environment.REDIS_PASSWORD).toMatch(/^\$\{REDIS_PASSWORD:\?[^}]+\}$/);
    expect(redis.healthcheck.test.join(' ')).toMatch(/REDISCLI_AUTH="\$\$REDIS_PASSWORD" redis-cli .*--user codemode ping/);
    for (const service of [api, worker]) expect(service.environment.REDIS_URL).toMatch(/^redis:\/\/codemode:\$\{REDIS_PASSWORD:\?[^}]+\}@redis:6379$/);
    // `:?` makes compose refuse to start without it; `:-` would be a default key.
    expect(api.environment.CODEMODE_API_KEYS).toMatch(/^\$\{CODEMODE_API_KEYS:\?[^}]+\}$/);
    expect(api.ports).toEqual(['127.0.0.1:3000:3000']);
    expect(Object.keys(worker.environment)).not.toContain('CODEMODE_API_KEYS');
    expect(worker.ports).toBeUndefined();
    expect(redis.ports).toBeUndefined();
  });

  it('build the image on Node 24 LTS with bubblewrap, under tini (also where manifests replace the entrypoint)', () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const bases = [...dockerfile.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]);
    expect(bases.length).toBeGreaterThan(0);
    for (const base of bases) expect(base).toMatch(/^node:24[-.@]/);
    expect(dockerfile).toMatch(/apt-get install[^\n]*\bbubblewrap\b[^\n]*\btini\b/);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m);
    for (const name of ['api', 'worker'] as const) {
      expect(service(name).spec.template.spec.containers[0].command.slice(0, 2)).toEqual(['/usr/bin/tini', '--']);
    }
    // package.json names Node 24 and still allows the 20.19+ that development machines run.
    const { engines } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Obj;
    expect(engines.node).toMatch(/(^|\|\|)\s*(\^|>=)24\b/);
    expect(engines.node).toMatch(/(^|\|\|)\s*\^20\.19(\.0)?\s*(\|\||$)/);
  });

  it('give the image user a writable CODEMODE_WORKSPACE_ROOT, which compose and the worker pod keep', () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const image = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    const root = /^ENV CODEMODE_WORKSPACE_ROOT=(\/\S+)$/m.exec(image)?.[1];
    const user = /^USER (\S+)$/m.exec(image)?.[1];
    expect({ root, user }).toEqual({ root: expect.any(String), user: expect.any(String) });
    // Created in the image and owned by its user (the default, ./.data/workspaces, is under the root-owned /app).
    const created = image.split('\n').find((line) => line.includes(`mkdir -p ${root}`));
    expect(created).toContain(`chown ${user}:${user} ${root}`);
    for (const [name, svc] of Object.entries(compose().services as Record<string, Obj>)) {
      if (svc.build === undefined) continue;
      // Same path, and no bind mount over it (it would bring the host folder's owner); Docker fills
      // a named or anonymous volume from the image, ownership included.
      const binds = ((svc.volumes ?? []) as Array<string | Obj>).filter((v) =>
        typeof v === 'string' ? /^[.~/][^:]*:/.test(v) && v.split(':')[1] === root : v.type === 'bind' && v.target === root,
      );
      expect({ name, root: svc.environment?.CODEMODE_WORKSPACE_ROOT ?? root, binds }).toEqual({ name, root, binds: [] });
    }
    expect(named('ConfigMap', 'codemode-config')!.data.CODEMODE_WORKSPACE_ROOT).toBe(root);
    expect(service('worker').spec.template.spec.containers[0].volumeMounts).toContainEqual({ name: 'workspaces', mountPath: root });
  });
});

/** Every PromQL expression in deploy/, with where it came from. */
function promqlExpressions(): Array<{ where: string; expr: string }> {
  const out: Array<{ where: string; expr: string }> = [];
  for (const rule of byKind('PrometheusRule')) {
    for (const group of rule.spec.groups) for (const r of group.rules) out.push({ where: `rule ${r.alert ?? r.record}`, expr: r.expr });
  }
  for (const scaled of byKind('ScaledObject')) {
    for (const trigger of scaled.spec.triggers) if (trigger.type === 'prometheus') out.push({ where: 'keda', expr: trigger.metadata.query });
  }
  for (const file of filesUnder(join(DEPLOY, 'grafana'), /\.json$/)) {
    const dashboard = JSON.parse(readFileSync(file, 'utf8')) as Obj;
    for (const panel of dashboard.panels) for (const target of panel.targets ?? []) out.push({ where: `panel ${panel.title}`, expr: target.expr });
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
      metricNamesIn('histogram_quantile(0.99, sum by (le, queue) (rate(codemode_x_bucket{queue="cells",a=~"b|c"}[$__rate_interval]))) > 0.2'),
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
