import { chmod, chown, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { SandboxIdentity } from './bwrap-invocation';

/**
 * Makes a session workspace usable by its tenant's sandbox: the folder is owned by the tenant's
 * uid with mode 0700, so no other tenant's uid can open it even by its host path, and its parent
 * folders (the deployment root and the tenant folder, owned by the worker) only let others pass
 * through (0711), so their listing shows nobody's session ids.
 */
export async function prepareWorkspace(workspace: string, identity: SandboxIdentity | null): Promise<void> {
  await mkdir(workspace, { recursive: true });
  if (!identity) return;
  await chmod(path.dirname(workspace), 0o711).catch(() => undefined);
  await chmod(path.dirname(path.dirname(workspace)), 0o711).catch(() => undefined);
  await chown(workspace, identity.uid, identity.gid);
  await chmod(workspace, 0o700);
}
