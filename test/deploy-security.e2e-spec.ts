import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { byKind, compose, named, ROOT, service, workloads, workloadsSelectedBy, type Obj } from './utils/deploy-manifests';

/*
 * Static checks of what SPEC §10 "Deployment" asks of deploy/, docker-compose.yml and the
 * Dockerfile: secrets where they belong, Redis behind a password and a NetworkPolicy, no
 * service-account tokens, the image's init, Node 24 and its writable workspace.
 */

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

const PRIVATE_V4 = ['10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.168.0.0/16'];
const PRIVATE_V6 = ['::1/128', 'fc00::/7', 'fe80::/10'];

describe('deploy/ secrets and network (SPEC §10 "Deployment")', () => {
  it('require a password for Redis: ACL user codemode, default user off, password from a Secret', () => {
    const redis = named('StatefulSet', 'codemode-redis')!.spec.template.spec.containers[0];
    const command = (redis.command as string[]).join(' ');
    expect(command).toMatch(/--user default off/);
    expect(command).toMatch(/--user codemode on ">\$REDIS_PASSWORD"/);
    expect(redis.env).toContainEqual({
      name: 'REDIS_PASSWORD',
      valueFrom: { secretKeyRef: { name: 'codemode-redis-auth', key: 'password' } },
    });
    for (const probe of [redis.livenessProbe, redis.readinessProbe]) {
      expect(probe.exec.command.join(' ')).toMatch(/REDISCLI_AUTH="\$REDIS_PASSWORD" redis-cli .*--user codemode ping/);
    }
    expect(Object.keys(named('Secret', 'codemode-redis-auth')!.stringData)).toEqual(['password']);
  });

  it('build REDIS_URL from the Secret in api and worker, and keep credentials out of every ConfigMap', () => {
    for (const name of ['api', 'worker'] as const) {
      const env = service(name).spec.template.spec.containers[0].env as Obj[];
      const at = (n: string): number => env.findIndex((e) => e.name === n);
      expect(env[at('REDIS_PASSWORD')]).toEqual({
        name: 'REDIS_PASSWORD',
        valueFrom: { secretKeyRef: { name: 'codemode-redis-auth', key: 'password' } },
      });
      expect(env[at('REDIS_URL')]).toEqual({ name: 'REDIS_URL', value: 'redis://codemode:$(REDIS_PASSWORD)@codemode-redis:6379' });
      // Kubernetes expands $(VAR) only from variables declared before it.
      expect(at('REDIS_PASSWORD')).toBeLessThan(at('REDIS_URL'));
    }
    for (const map of byKind('ConfigMap')) {
      for (const [key, value] of Object.entries(map.data as Record<string, string>)) {
        expect({
          map: map.metadata.name,
          key,
          secret: /API_KEYS|SECRET|PASSWORD|REDIS_URL/.test(key) || /^\s*(requirepass|user )/m.test(value),
        }).toEqual({
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
    const policy = byKind('NetworkPolicy').find((p) =>
      workloadsSelectedBy(p.spec.podSelector.matchLabels).includes(named('StatefulSet', 'codemode-redis')!),
    )!;
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
    for (const service of [api, worker])
      expect(service.environment.REDIS_URL).toMatch(/^redis:\/\/codemode:\$\{REDIS_PASSWORD:\?[^}]+\}@redis:6379$/);
    // `:?` makes compose refuse to start without it; `:-` would be a default key.
    expect(api.environment.CODEMODE_API_KEYS).toMatch(/^\$\{CODEMODE_API_KEYS:\?[^}]+\}$/);
    expect(api.ports).toEqual(['127.0.0.1:3000:3000', '127.0.0.1:9465:9465']);
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
