import { rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { SessionRef } from '@codemode/contracts';

/** `<parent>/<name>`, refused unless it is exactly one level below `parent` under that very name (no `.`, `..`, `/`). */
function childOf(parent: string, name: string, what: string): string {
  const path = join(resolve(parent), name);
  if (dirname(path) !== resolve(parent) || basename(path) !== name) throw new Error(`refusing workspace for ${what}`);
  return path;
}

/** The folder of a tenant's session workspaces, `<root>/<tenant>`. */
export function tenantWorkspaces(root: string, tenant: string): string {
  return childOf(root, tenant, `tenant ${JSON.stringify(tenant)}`);
}

/**
 * The one derivation of a session's workspace: `<root>/<tenant>/<sessionId>`. Ids are validated
 * where they enter, and this checks again that the folder is exactly two levels below the root, so
 * no id (`..`, `.`) can ever name the root, a tenant folder or anything outside it.
 */
export function sessionWorkspace(root: string, ref: SessionRef): string {
  return childOf(
    tenantWorkspaces(root, ref.tenant),
    ref.sessionId,
    `tenant ${JSON.stringify(ref.tenant)} session ${JSON.stringify(ref.sessionId)}`,
  );
}

/**
 * Removes a session's workspace folder, off the event loop. `rm` unlinks links inside instead of
 * following them, so nothing outside the folder is touched; a missing folder is not an error.
 */
export async function removeSessionWorkspace(root: string, ref: SessionRef): Promise<void> {
  await rm(sessionWorkspace(root, ref), { recursive: true, force: true, maxRetries: 2 });
}
