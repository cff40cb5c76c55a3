import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';

/** Parsed deploy/ manifests and docker-compose.yml, for the static deploy specs (no cluster, no running stack). */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed YAML and JSON: the assertions are the type check
export type Obj = Record<string, any>;

export const ROOT = join(__dirname, '..', '..');
export const DEPLOY = join(ROOT, 'deploy');

export function filesUnder(dir: string, ext: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(full, ext);
    return ext.test(entry.name) ? [full] : [];
  });
}

export interface Manifest {
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

export const manifests = loadManifests();
export const resources = manifests.filter((m) => m.doc.kind !== 'Kustomization');
export const byKind = (kind: string): Obj[] => resources.filter((m) => m.doc.kind === kind).map((m) => m.doc);
export const workloads = (): Obj[] => [...byKind('Deployment'), ...byKind('StatefulSet')];
export const named = (kind: string, name: string): Obj | undefined => byKind(kind).find((d) => d.metadata.name === name);
export const compose = (): Obj => parseYaml(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as Obj;

export function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** The workloads whose pods a label selector picks. */
export function workloadsSelectedBy(selector: Record<string, string>): Obj[] {
  return workloads().filter((w) => matches(selector, w.spec.template.metadata.labels ?? {}));
}

export function service(name: 'api' | 'worker'): Obj {
  return named('Deployment', `codemode-${name}`)!;
}
