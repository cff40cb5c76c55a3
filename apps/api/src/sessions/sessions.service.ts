import { Inject, Injectable } from '@nestjs/common';
import { SessionPutInputSchema, type SessionConfig, type SessionRef, type SessionView, type TranscriptEntry } from '@codemode/contracts';
import {
  apiTenancy,
  clampedSettings,
  effectiveLimits,
  effectiveShellConfig,
  LIMIT_RULES,
  limitOverrides,
  REPAIR_ATTEMPTS_RULE,
  repairAttemptsOverride,
  SHELL_RULES,
  SHELL_SWITCHES,
  shellOverrides,
  type AppConfig,
} from '@codemode/config';
import { RunLedger, SessionLedger } from '@codemode/events';
import { findRefusedUrl, refusalReason, WebhookAddressPolicy, WebhookAllowList } from '@codemode/tools';
import { InvalidInputException, NotFoundApiException } from '../http/api-errors';
import { APP_CONFIG } from '../core/tokens';

type StoredSession = NonNullable<Awaited<ReturnType<SessionLedger['get']>>>;

/** The shell settings a PUT may give: the integers and the switches. */
const SHELL_SETTINGS = [...Object.keys(SHELL_RULES), ...Object.keys(SHELL_SWITCHES)];

@Injectable()
export class SessionsService {
  private readonly webhookAllow: WebhookAllowList;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sessions: SessionLedger,
    private readonly runs: RunLedger,
  ) {
    this.webhookAllow = new WebhookAllowList(config.tenancySettings.webhookAllow);
  }

  /** PUT merges: omitted fields keep their values; a field that is not a valid setting reverts to the default. */
  async configure(ref: SessionRef, body: Record<string, unknown>): Promise<SessionConfig> {
    const parsed = SessionPutInputSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue.path.join('.') || 'body';
      throw new InvalidInputException(`${field}: ${issue.message}`, { field });
    }
    const input = parsed.data;
    if (typeof input.notifyUrl === 'string') await this.checkNotifyUrl(input.notifyUrl);
    const stored = await this.sessions.configure(ref, {
      ...(input.agentId === undefined ? {} : { agentId: input.agentId }),
      ...(input.agents === undefined ? {} : { agents: input.agents }),
      ...(input.notifyUrl === undefined ? {} : { notifyUrl: input.notifyUrl }),
      ...(input.codeMode === undefined
        ? {}
        : { codeMode: patchOf(input.codeMode, limitOverrides(input.codeMode), Object.keys(LIMIT_RULES)) }),
      ...(input.shell === undefined ? {} : { shell: patchOf(input.shell, shellOverrides(input.shell), SHELL_SETTINGS) }),
      ...(input.repairAttempts === undefined ? {} : { repairAttempts: repairAttemptsOverride(input.repairAttempts) }),
    });
    const config = this.toConfig(ref, stored);
    // A clamp is said, not silent (issue 43): the settings asked for that the session does not get as asked.
    const clamped = clampedSettings(input, config);
    return clamped.length > 0 ? { ...config, clamped } : config;
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
    stored: Pick<StoredSession, 'agentId' | 'codeMode' | 'shell' | 'agents' | 'repairAttempts' | 'notifyUrl'>,
  ): SessionConfig {
    return {
      sessionId: ref.sessionId,
      agentId: stored.agentId,
      codeMode: effectiveLimits(this.config, ref.tenant, stored.codeMode),
      shell: effectiveShellConfig(this.config, stored.shell),
      agents: stored.agents,
      repairAttempts: stored.repairAttempts ?? REPAIR_ATTEMPTS_RULE.defaultValue,
      notifyUrl: stored.notifyUrl,
    };
  }

  /**
   * SPEC §7: a `notifyUrl` passes the address rules of client tool webhooks (SPEC §10), here and
   * again when the worker dials it.
   */
  private async checkNotifyUrl(url: string): Promise<void> {
    const refused = await findRefusedUrl(url, new WebhookAddressPolicy(this.webhookAllow, apiTenancy(this.config)));
    if (!refused) return;
    const { origin, refusal } = refused;
    throw new InvalidInputException(
      `notifyUrl: ${origin} ${refusalReason(refusal)}, which webhooks may not reach; allow it with CODEMODE_WEBHOOK_ALLOW.`,
      { field: 'notifyUrl', address: refusal.address, addressClass: refusal.addressClass },
    );
  }
}

/**
 * Fields present in the input become overrides; present but invalid ones become null, which
 * removes the stored override so the deployment default applies again.
 */
function patchOf<T extends object>(input: Record<string, unknown>, valid: Partial<T>, names: string[]): { [K in keyof T]?: T[K] | null } {
  const patch: Record<string, unknown> = {};
  for (const name of names) {
    if (!(name in input) || input[name] === undefined) continue;
    patch[name] = (valid as Record<string, unknown>)[name] ?? null;
  }
  return patch as { [K in keyof T]?: T[K] | null };
}
