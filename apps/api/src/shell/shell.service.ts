import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  ProcessInputSchema,
  ShellExecInputSchema,
  shellScopeKey,
  type ShellAnswer,
  type SessionRef,
  type ShellConfig,
  type ShellJob,
} from '@codemode/contracts';
import { effectiveShellConfig, type AppConfig, type KeyRole } from '@codemode/config';
import { RunReplies, SessionLedger } from '@codemode/events';
import { WorkerPresence } from '@codemode/fleet';
import type { Logger } from '@codemode/telemetry';
import { shellRouteRefusal } from '@codemode/tools';
import { InvalidInputException, PolicyDeniedApiException } from '../http/api-errors';
import { ShellQueue } from '../queues/shell-queue';
import { WorkerQueues } from '../queues/worker-queues';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { PolicyService } from '../policy/policy.service';

/** Longest a `process poll` may wait (SPEC §7). */
const MAX_POLL_WAIT_MS = 30_000;
const REPLY_GRACE_MS = 5_000;

/**
 * `shell/exec` and `process` (SPEC §7). The API runs no commands: each request goes to the
 * worker that serves the session's shell scope (its "home"), or to any worker when the scope has
 * none alive, and the answer is pushed back. An agent key's request is under the session's tool
 * policy (SPEC §11), checked before anything is written; an operator key's is the platform's own.
 */
@Injectable()
export class ShellService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly sessions: SessionLedger,
    private readonly presence: WorkerPresence,
    private readonly replies: RunReplies,
    private readonly shared: ShellQueue,
    private readonly workers: WorkerQueues,
    private readonly policies: PolicyService,
  ) {}

  exec(ref: SessionRef, role: KeyRole, body: Record<string, unknown>): Promise<ShellAnswer> {
    const input = checkTypes(ShellExecInputSchema.partial(), body);
    const cap = this.config.shellSandbox.maxTimeoutSeconds;
    // awaitResults waits for the command itself: as long as the timeout the worker applies.
    const waitMs = (config: ShellConfig): number =>
      input.awaitResults === true ? commandTimeoutSeconds(input.timeoutSeconds, config.timeoutSeconds, cap) * 1000 : 120_000;
    return this.send(ref, role, 'exec', { ...input, command: input.command ?? '' }, waitMs);
  }

  process(ref: SessionRef, role: KeyRole, body: Record<string, unknown>): Promise<ShellAnswer> {
    const input = checkTypes(ProcessInputSchema.partial(), body);
    return this.send(ref, role, 'process', { ...input, action: input.action ?? '' }, () => MAX_POLL_WAIT_MS);
  }

  private async send(
    ref: SessionRef,
    role: KeyRole,
    kind: ShellJob['kind'],
    input: Record<string, unknown>,
    waitMsFor: (config: ShellConfig) => number,
  ): Promise<ShellAnswer> {
    // The shell tool's policy name is `exec`, the process tool's `process`: the job kinds.
    const refusal = role === 'agent' ? shellRouteRefusal(await this.policies.effective(ref), kind) : null;
    if (refusal !== null) throw new PolicyDeniedApiException(refusal);
    // A shell request is a write: it creates the session with defaults (SPEC §1).
    const session = (await this.sessions.get(ref)) ?? (await this.sessions.configure(ref, {}));
    const scopeKey = shellScopeKey(ref.sessionId, session.agentId);
    const config = effectiveShellConfig(this.config, session.shell);
    const job: ShellJob = {
      tenant: ref.tenant,
      sessionId: ref.sessionId,
      scopeKey,
      kind,
      input,
      config,
      requestId: randomUUID(),
      replyTo: this.replies.channelFor(ref),
    };
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), waitMsFor(config) + REPLY_GRACE_MS);
    try {
      const answer = this.replies.waitForAnswer(job.requestId, controller.signal);
      const home = await this.presence.shellHome(ref.tenant, scopeKey);
      if (home) await this.workers.shell(home, job);
      else await this.shared.add(job);
      return (await answer) as ShellAnswer;
    } catch (error) {
      if (!controller.signal.aborted) throw error;
      this.logger.warn({ tenant: ref.tenant, sessionId: ref.sessionId, kind }, 'no worker answered a shell request in time');
      return { text: 'No worker answered the shell request in time; retry it.', details: { status: 'failed' } };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** SPEC §7: 400 only for fields of the wrong type; missing fields are tool-level answers. */
function checkTypes<T>(
  schema: {
    safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  },
  body: Record<string, unknown>,
): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue.path.map(String).join('.') || 'body';
  throw new InvalidInputException(`${field}: ${issue.message}`, { field });
}

/** The timeout the worker gives a command (SPEC §7, §10): `0` or over the cap means the cap. */
function commandTimeoutSeconds(requested: unknown, sessionDefault: number, cap: number): number {
  const chosen = typeof requested === 'number' && Number.isFinite(requested) && requested >= 0 ? requested : sessionDefault;
  return chosen === 0 || chosen > cap ? cap : chosen;
}
