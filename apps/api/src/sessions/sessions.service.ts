import { Inject, Injectable } from '@nestjs/common';
import { SessionPutInputSchema, type SessionConfig, type SessionRef, type SessionView, type TranscriptEntry } from '@codemode/contracts';
import {
  effectiveLimits,
  effectiveShellConfig,
  LIMIT_RULES,
  limitOverrides,
  REPAIR_ATTEMPTS_RULE,
  repairAttemptsOverride,
  SHELL_RULES,
  shellOverrides,
  type AppConfig,
} from '@codemode/config';
import { RunLedger, SessionLedger } from '@codemode/events';
import { InvalidInputException, NotFoundApiException } from '../core/api-errors';
import { APP_CONFIG } from '../core/tokens';

type StoredSession = NonNullable<Awaited<ReturnType<SessionLedger['get']>>>;

@Injectable()
export class SessionsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sessions: SessionLedger,
    private readonly runs: RunLedger,
  ) {}

  /** PUT merges: omitted fields keep their values; a field that is not a valid setting reverts to the default. */
  async configure(ref: SessionRef, body: Record<string, unknown>): Promise<SessionConfig> {
    const parsed = SessionPutInputSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue.path.join('.') || 'body';
      throw new InvalidInputException(`${field}: ${issue.message}`, { field });
    }
    const input = parsed.data;
    const stored = await this.sessions.configure(ref, {
      ...(input.agentId === undefined ? {} : { agentId: input.agentId }),
      ...(input.agents === undefined ? {} : { agents: input.agents }),
      ...(input.codeMode === undefined
        ? {}
        : { codeMode: patchOf(input.codeMode, limitOverrides(input.codeMode), Object.keys(LIMIT_RULES)) }),
      ...(input.shell === undefined ? {} : { shell: patchOf(input.shell, shellOverrides(input.shell), Object.keys(SHELL_RULES)) }),
      ...(input.repairAttempts === undefined ? {} : { repairAttempts: repairAttemptsOverride(input.repairAttempts) }),
    });
    return this.toConfig(ref, stored);
  }

  async get(ref: SessionRef): Promise<SessionView> {
    const stored = await this.sessions.get(ref);
    if (!stored) throw new NotFoundApiException(`session ${ref.sessionId} not found.`);
    return { ...this.toConfig(ref, stored), counts: stored.counts, createdAt: stored.createdAt, updatedAt: stored.updatedAt };
  }

  async transcript(ref: SessionRef): Promise<{ entries: TranscriptEntry[] }> {
    const entries = await this.runs.transcript(ref);
    if (entries === null) throw new NotFoundApiException(`session ${ref.sessionId} not found.`);
    return { entries };
  }

  /** The effective values (ceilings and shell caps applied): what `exec` and shell calls run with. */
  private toConfig(
    ref: SessionRef,
    stored: Pick<StoredSession, 'agentId' | 'codeMode' | 'shell' | 'agents' | 'repairAttempts'>,
  ): SessionConfig {
    return {
      sessionId: ref.sessionId,
      agentId: stored.agentId,
      codeMode: effectiveLimits(this.config, ref.tenant, stored.codeMode),
      shell: effectiveShellConfig(this.config, stored.shell),
      agents: stored.agents,
      repairAttempts: stored.repairAttempts ?? REPAIR_ATTEMPTS_RULE.defaultValue,
    };
  }
}

/**
 * Fields present in the input become overrides; present but invalid ones become null, which
 * removes the stored override so the deployment default applies again.
 */
function patchOf<T extends object>(
  input: Record<string, unknown>,
  valid: Partial<T>,
  names: string[],
): Partial<Record<keyof T, number | null>> {
  const patch: Record<string, number | null> = {};
  for (const name of names) {
    if (!(name in input) || input[name] === undefined) continue;
    patch[name] = (valid as Record<string, number | undefined>)[name] ?? null;
  }
  return patch as Partial<Record<keyof T, number | null>>;
}
