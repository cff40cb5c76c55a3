import type { Limits, SessionRef, ShellConfig } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import { InvalidArgumentError } from '../platform/errors';
import type { KeySpace } from '../platform/keys';
import { checkReply } from '../platform/lua-errors';
import { sessionFromHash, settingsFromHash, type SessionRecord, type SessionSettings } from '../log/projections/views';
import { execMulti, guard } from '../platform/redis';
import { ScriptLoader } from '../platform/script-loader';
import { SessionIndex } from '../log/session-index';

/** A `PUT /sessions/{sid}` patch, already resolved: a field given as null removes the override. */
export interface SessionPatch {
  agentId?: string | null;
  codeMode?: { [K in keyof Limits]?: number | null };
  shell?: { [K in keyof ShellConfig]?: ShellConfig[K] | null };
  agents?: boolean;
  /** SPEC §16: null removes the session's own value. */
  repairAttempts?: number | null;
  /** SPEC §7: the session's exit-notification URL, already checked against the address rules. */
  notifyUrl?: string | null;
}

/** A session's settings as read at one `configVersion` (bumped by every `session.configured`). */
export interface SessionSettingsAt {
  settings: SessionSettings | null;
  version: string;
}

/** Patched numbers go through cjson in Lua, which is exact only below 1e14. */
const MAX_OVERRIDE = 1e14;

/** The session projection: configuration overrides, times and counts. */
export class SessionLedger {
  private readonly index: SessionIndex;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly scripts = ScriptLoader.default(),
  ) {
    this.index = new SessionIndex(redis, keys, scripts);
  }

  /**
   * Merges `patch` into the stored overrides atomically (omitted fields keep their values, null
   * removes), creating the session if missing, and appends `session.configured` with the result.
   */
  async configure(ref: SessionRef, patch: SessionPatch): Promise<SessionSettings> {
    const agentsMode = patch.agents === undefined ? 'keep' : patch.agents ? 'on' : 'off';
    const args = [
      fieldMode(patch.agentId),
      patch.agentId ?? '',
      overridesJson('codeMode', patch.codeMode),
      overridesJson('shell', patch.shell),
      agentsMode,
      repairAttemptsArg(patch.repairAttempts),
      fieldMode(patch.notifyUrl),
      patch.notifyUrl ?? '',
    ];
    const raw = await this.index.alongside(ref, () =>
      guard(() => this.scripts.run(this.redis, 'configure-session', this.keys.scriptKeys(ref, ''), args)),
    );
    const [, , agentId, codeMode, shell, createdAt, updatedAt, agents, repairAttempts, notifyUrl] = checkReply(raw, {
      type: 'session.configured',
    });
    return {
      agentId: agentId ?? null,
      notifyUrl: notifyUrl ?? null,
      codeMode: JSON.parse(codeMode ?? '{}') as Partial<Limits>,
      shell: JSON.parse(shell ?? '{}') as Partial<ShellConfig>,
      agents: agents === '1',
      ...(repairAttempts === null || repairAttempts === undefined ? {} : { repairAttempts: Number(repairAttempts) }),
      createdAt: createdAt ?? '',
      updatedAt: updatedAt ?? '',
    };
  }

  /** The session projection, or null when the session was never created. */
  async get(ref: SessionRef): Promise<SessionRecord | null> {
    // One MULTI so the hash and the counts describe the same moment.
    const multi = this.redis.multi().hgetall(this.keys.session(ref)).xlen(this.keys.events(ref)).llen(this.keys.transcript(ref));
    const [hash, events, transcript] = (await execMulti(multi)) as [Record<string, string>, number, number];
    // Finished runs' events kept in their records (lua/includes/run-record.lua) are the log's too.
    return sessionFromHash(hash, events + Number(hash.pastEvents ?? 0), transcript);
  }

  /**
   * The session's stored configuration alone (one HGETALL, no counts; null when never created),
   * with the `configVersion` it is at ('0' before the first configuration), which
   * `RunLedger.request` can check.
   */
  async settings(ref: SessionRef): Promise<SessionSettingsAt> {
    const hash = await guard(() => this.redis.hgetall(this.keys.session(ref)));
    return { settings: settingsFromHash(hash), version: hash.configVersion ?? '0' };
  }
}

/** configure-session.lua's ARGV[6]: '' keeps the session's value, 'null' removes it. */
function repairAttemptsArg(value: number | null | undefined): string {
  if (value === undefined) return '';
  if (value !== null && !(Number.isSafeInteger(value) && value >= 0 && value < MAX_OVERRIDE)) {
    throw new InvalidArgumentError('repairAttempts', 'must be a non-negative integer or null');
  }
  return String(value);
}

/** How the script treats a string field of the patch: omitted keeps it, null clears it. */
function fieldMode(value: string | null | undefined): 'keep' | 'clear' | 'set' {
  return value === undefined ? 'keep' : value === null ? 'clear' : 'set';
}

function overridesJson(field: string, overrides: Record<string, number | boolean | null | undefined> | undefined): string {
  const clean: Record<string, number | boolean | null> = {};
  for (const [name, value] of Object.entries(overrides ?? {})) {
    if (value === undefined) continue;
    if (value !== null && typeof value !== 'boolean' && !(Number.isInteger(value) && Math.abs(value) < MAX_OVERRIDE)) {
      throw new InvalidArgumentError(`${field}.${name}`, 'must be an integer, a boolean or null');
    }
    clean[name] = value;
  }
  return JSON.stringify(clean);
}
