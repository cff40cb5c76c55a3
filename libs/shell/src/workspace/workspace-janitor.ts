import { opendir } from 'node:fs/promises';
import { SESSION_ID_PATTERN, type SessionRef } from '@codemode/contracts';
import { removeSessionWorkspace, sessionWorkspace, tenantWorkspaces } from './session-workspace';

/** Tenant ids as KeySpace accepts them: a folder named otherwise is no tenant's and is left alone. */
const TENANT_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
/** Sessions looked up in Redis (one pipeline) and removed per batch: bounds memory and the work between yields. */
const DEFAULT_BATCH = 100;

export interface WorkspaceJanitorOptions {
  /** `CODEMODE_WORKSPACE_ROOT`. */
  root: string;
  /** Which of these sessions still exist, in order (one pipelined EXISTS per batch). */
  existing: (refs: readonly SessionRef[]) => Promise<boolean[]>;
  /** Whether a shell process still runs in this workspace: such a folder is kept. */
  busy: (workspace: string) => boolean;
  /** @default 100 */
  batchSize?: number;
}

export interface WorkspaceSweep {
  kept: number;
  removed: number;
}

/**
 * Removes the workspaces whose session no longer exists (SPEC §10): expired sessions, and deleted
 * ones whose removal message this worker missed. Only real folders two levels below the root with
 * valid tenant and session names are considered (links are skipped, never followed), their paths
 * come from `sessionWorkspace`, and a folder a shell process still runs in is kept.
 */
export class WorkspaceJanitor {
  private readonly batchSize: number;

  constructor(private readonly opts: WorkspaceJanitorOptions) {
    this.batchSize = opts.batchSize ?? DEFAULT_BATCH;
  }

  async sweep(): Promise<WorkspaceSweep> {
    const result: WorkspaceSweep = { kept: 0, removed: 0 };
    let batch: SessionRef[] = [];
    for await (const ref of this.workspaces()) {
      batch.push(ref);
      if (batch.length < this.batchSize) continue;
      await this.settle(batch, result);
      batch = [];
    }
    if (batch.length > 0) await this.settle(batch, result);
    return result;
  }

  private async settle(refs: SessionRef[], result: WorkspaceSweep): Promise<void> {
    const exists = await this.opts.existing(refs);
    for (const [i, ref] of refs.entries()) {
      if (exists[i] !== false || this.opts.busy(sessionWorkspace(this.opts.root, ref))) {
        result.kept += 1;
        continue;
      }
      await removeSessionWorkspace(this.opts.root, ref);
      result.removed += 1;
    }
  }

  /** Every candidate workspace, read entry by entry (`opendir`), so a huge folder is never held whole. */
  private async *workspaces(): AsyncGenerator<SessionRef> {
    for await (const tenant of folders(this.opts.root)) {
      if (!TENANT_PATTERN.test(tenant)) continue;
      for await (const sessionId of folders(tenantWorkspaces(this.opts.root, tenant))) {
        if (SESSION_ID_PATTERN.test(sessionId)) yield { tenant, sessionId };
      }
    }
  }
}

/** Names of the real folders in `dir` (links are not folders here); none when `dir` is missing. */
async function* folders(dir: string): AsyncGenerator<string> {
  let handle;
  try {
    handle = await opendir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return;
    throw error;
  }
  for await (const entry of handle) if (entry.isDirectory()) yield entry.name;
}
