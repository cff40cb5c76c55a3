import type { ClientTool, SessionRef } from '@codemode/contracts';
import type { Redis } from 'ioredis';
import { StoreCommandError } from './errors';
import { encodeToolsRegistered } from './event-encoding';
import type { KeySpace } from './keys';
import { checkReply } from './lua-errors';
import { guard } from './redis';
import { ScriptLoader } from './script-loader';
import { SessionIndex } from './session-index';

/**
 * The session's client tools (`PUT /tools`), a projection of `tools.registered`. The event holds
 * the names and count only; endpoints and schemas live in the projection key alone, so this is
 * the one projection a rebuild from the log recovers only in part (the names).
 */
export class ClientToolsLedger {
  private readonly index: SessionIndex;

  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    private readonly scripts = ScriptLoader.default(),
  ) {
    this.index = new SessionIndex(redis, keys, scripts);
  }

  /**
   * Replaces the session's client tools with `tools` (already validated by the caller's schema),
   * creating the session if missing, and appends `tools.registered` `{tools: names, count}`.
   */
  async put(ref: SessionRef, tools: readonly ClientTool[]): Promise<{ eventId: string }> {
    const { data, toolsJson } = encodeToolsRegistered(tools);
    const keys = [...this.keys.scriptKeys(ref, ''), this.keys.clientTools(ref)];
    const raw = await this.index.alongside(ref, () => guard(() => this.scripts.run(this.redis, 'register-tools', keys, [data, toolsJson])));
    return { eventId: String(checkReply(raw, { type: 'tools.registered' })[1]) };
  }

  /** The session's client tools as last registered; empty when none were. */
  async get(ref: SessionRef): Promise<ClientTool[]> {
    const json = await guard(() => this.redis.get(this.keys.clientTools(ref)));
    if (json === null) return [];
    try {
      return JSON.parse(json) as ClientTool[];
    } catch (err) {
      throw new StoreCommandError(err);
    }
  }
}
