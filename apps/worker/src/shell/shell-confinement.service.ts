import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { rmSync } from 'node:fs';
import type { AppConfig } from '@codemode/config';
import { TenantUids } from '@codemode/fleet';
import {
  decideConfinement,
  probeSandbox,
  writeSandboxEtc,
  type Confinement,
  type ConfinementDecision,
  type SandboxProbe,
  type SandboxSetup,
} from '@codemode/shell';
import type { Logger } from '@codemode/telemetry';
import { WorkerTenancy } from '../core/worker-tenancy.service';
import { APP_CONFIG, LOGGER } from '../core/tokens';

/** SPEC §10 caps that are not operator settings. */
const OPEN_FILES = 1024;
const TMP_BYTES = 64 * 1024 * 1024;

/**
 * Decides how this worker's shell commands run (SPEC §10): probes bubblewrap at start, applies
 * the rule of `decideConfinement` in the worker's tenancy mode, and gives each tenant its own
 * host uid when the worker is root.
 */
@Injectable()
export class ShellConfinement implements OnModuleInit, OnApplicationShutdown {
  readonly setup: SandboxSetup;
  private probe: SandboxProbe = { ok: false, reason: 'the sandbox has not been checked yet' };
  /** Only root can hand commands to other uids; an unprivileged worker's sandboxes run as itself. */
  private readonly asRoot = process.getuid?.() === 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly tenancy: WorkerTenancy,
    private readonly uids: TenantUids,
  ) {
    const s = config.shellSandbox;
    this.setup = {
      bwrapPath: s.bwrapPath,
      prlimitPath: s.prlimitPath,
      etcDir: writeSandboxEtc(),
      limits: {
        maxProcesses: s.maxProcesses,
        memoryBytes: s.memoryBytes,
        maxFileBytes: s.maxFileBytes,
        openFiles: OPEN_FILES,
        tmpBytes: TMP_BYTES,
      },
    };
  }

  async onModuleInit(): Promise<void> {
    if (this.config.shellSandbox.mode !== 'none') {
      const first = this.config.shellSandbox.uidRange.first;
      this.probe = await probeSandbox(this.setup, this.asRoot ? { uid: first, gid: first } : null);
    }
    this.report();
    this.tenancy.onChange(() => this.report());
  }

  onApplicationShutdown(): void {
    rmSync(this.setup.etcDir, { recursive: true, force: true });
  }

  decision(): ConfinementDecision {
    return decideConfinement(this.config.shellSandbox.mode, this.probe, this.tenancy.mode);
  }

  /** Why this worker is not ready to run shell commands, or null when it is. */
  unreadyReason(): string | null {
    const decision = this.decision();
    return decision.kind === 'unavailable' ? `shell sandbox unavailable: ${decision.reason}` : null;
  }

  /** How a command of `tenant` runs now. */
  async forTenant(tenant: string): Promise<Confinement> {
    const decision = this.decision();
    if (decision.kind !== 'bwrap') return decision;
    if (!this.asRoot) return { kind: 'bwrap', identity: null };
    try {
      const uid = await this.uids.uidOf(tenant);
      return { kind: 'bwrap', identity: { uid, gid: uid } };
    } catch (error) {
      return { kind: 'unavailable', reason: error instanceof Error ? error.message : String(error) };
    }
  }

  private report(): void {
    const decision = this.decision();
    const mode = this.tenancy.mode;
    const fields = { tenancy: mode, shellSandbox: this.config.shellSandbox.mode, probe: this.probe };
    // The expected case at debug: a start writes one line at info (SPEC §19); the others are errors.
    if (decision.kind === 'bwrap') this.logger.debug(fields, 'shell commands run confined by bubblewrap');
    else if (decision.kind === 'unavailable')
      this.logger.error(fields, `shell commands are refused: shell sandbox unavailable: ${decision.reason}`);
    else if (mode === 'multi')
      this.logger.error(
        fields,
        'shell commands run UNCONFINED in a multi-tenant deployment (CODEMODE_SHELL_SANDBOX=none): any tenant can read the worker and reach its network',
      );
    else
      this.logger.warn(
        fields,
        'shell commands run unconfined (bubblewrap unavailable or CODEMODE_SHELL_SANDBOX=none); fine for single-user development only',
      );
  }
}
