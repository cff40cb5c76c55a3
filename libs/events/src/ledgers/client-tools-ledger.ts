import { createHash, randomBytes } from 'node:crypto';
import type { ClientTool, RegisteredClientTool, SessionRef } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import { StoreCommandError } from '../platform/errors';
import { encodeToolsRegistered } from '../log/event-encoding';
import type { KeySpace } from '../platform/keys';
import { checkReply, LUA_CODES, type ScriptReply } from '../platform/lua-errors';
import { closeConnection, duplicateForBulk, execMulti, guard } from '../platform/redis';
import { ScriptLoader } from '../platform/script-loader';
import { SessionIndex } from '../log/session-index';

/** The session's client tools with the version of the list they were read from (`putIfUnchanged`). */
export interface ClientToolsRead {
  tools: RegisteredClientTool[];
  /** The stored list's version ('' when none is stored); see {@link ClientToolsLedger.version}. */
  version: string;
}

/** A staged list that its registration never renamed into place (the API died between) goes by then. */
const STAGED_TTL_MS = 60_000;
/** Lists past this size move on the ledger's own connection (`duplicateForBulk`). */
const BULK_BYTES = 256 * 1024;

/**
 * The session's client tools (`PUT /tools`), a projection of `tools.registered`. The event holds
 * the names and count only; endpoints and schemas (and who registered each tool, SPEC §11) live
 * in the projection key alone, so this is the one projection a rebuild from the log recovers only
 * in part (the names).
 */
export class ClientToolsLedger {
  private readonly index: SessionIndex;
  private bulkConnection: RedisClient | null = null;

  constructor(
    private readonly redis: RedisClient,
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
    return { eventId: String((await this.register(ref, data, toolsJson, []))[1]) };
  }

  /**
   * {@link put} of tools serialized by the caller (`JSON.stringify(tools)`, as `toolsJson` of
   * `encodeToolsRegistered`): the API checks and serializes a large registration on a body thread,
   * so its event loop never walks it. As UTF-8 bytes, ioredis writes it without encoding it (an
   * 11 MB string held the event loop for hundreds of ms).
   */
  async putJson(ref: SessionRef, names: readonly string[], toolsJson: string | Buffer): Promise<{ eventId: string }> {
    const { data } = encodeToolsRegistered(names.map((name) => ({ name })));
    return { eventId: String((await this.register(ref, data, toolsJson, []))[1]) };
  }

  /**
   * `put`, but only over the list `read` answered as `version`: false (nothing written) when the
   * session's tools were registered again since, so a merged list never undoes another's change.
   */
  async putIfUnchanged(ref: SessionRef, tools: readonly RegisteredClientTool[], version: string): Promise<boolean> {
    return this.putJsonIfUnchanged(
      ref,
      tools.map((tool) => tool.name),
      encodeToolsRegistered(tools).toolsJson,
      version,
    );
  }

  /**
   * {@link putIfUnchanged} of a list serialized by the caller, as {@link putJson}: the API merges
   * an agent's registration onto a large list on a body thread, so its event loop never walks it.
   */
  async putJsonIfUnchanged(ref: SessionRef, names: readonly string[], toolsJson: string | Buffer, version: string): Promise<boolean> {
    const { data } = encodeToolsRegistered(names.map((name) => ({ name })));
    return (await this.register(ref, data, toolsJson, [version]))[0] !== LUA_CODES.declined;
  }

  /**
   * The list is SET under a staged key and the script renames it into place, in one pipeline: the
   * list never passes through Lua (see register-tools.lua).
   */
  private async register(ref: SessionRef, data: string, toolsJson: string | Buffer, condition: string[]): Promise<ScriptReply> {
    const version = randomBytes(12).toString('hex');
    const staged = this.keys.stagedClientTools(ref, version);
    const keys = [...this.keys.scriptKeys(ref, ''), this.keys.clientTools(ref), staged];
    const args = [data, version, ...condition];
    const register = (): Promise<unknown> => this.scripts.run(this.redis, 'register-tools', keys, args);
    const raw = await this.index.alongside(ref, () =>
      guard(async () => {
        if (toolsJson.length > BULK_BYTES) {
          await this.bulk().set(staged, toolsJson, 'PX', STAGED_TTL_MS);
          return register();
        }
        // One pipeline: the script runs right after the SET on the same connection.
        const [, reply] = await Promise.all([this.redis.set(staged, toolsJson, 'PX', STAGED_TTL_MS), register()]);
        return reply;
      }),
    );
    return checkReply(raw, { type: 'tools.registered' });
  }

  /** Closes the ledger's own connection, if it opened one. */
  close(): void {
    if (this.bulkConnection) closeConnection(this.bulkConnection);
    this.bulkConnection = null;
  }

  /**
   * The connection to read the session's list on: the ledger's own for a large one, so the replies
   * behind it on the shared connection never wait for it; the shared one otherwise, so a small
   * list never waits behind another session's megabytes on the ledger's (one STRLEN first).
   */
  private async readerFor(ref: SessionRef): Promise<RedisClient> {
    const stored = await guard(() => this.redis.strlen(this.keys.clientTools(ref)));
    return stored > BULK_BYTES ? this.bulk() : this.redis;
  }

  private bulk(): RedisClient {
    this.bulkConnection ??= duplicateForBulk(this.redis, 'client-tools-bulk');
    return this.bulkConnection;
  }

  /**
   * The session's client tools as the JSON {@link put} stored (null when none were registered),
   * as its UTF-8 bytes, never decoded (a list reaches 16 MiB), on the connection `readerFor` picks.
   */
  async getJsonBytes(ref: SessionRef): Promise<Buffer | null> {
    const reader = await this.readerFor(ref);
    return guard(() => reader.getBuffer(this.keys.clientTools(ref)));
  }

  /**
   * The version of the session's list: it changes with every registration, so it names what a
   * run's catalog was built from. '' when none is stored. A list stored before versions were
   * kept answers its SHA-1, as register-tools.lua compares it.
   */
  async version(ref: SessionRef): Promise<string> {
    // Together (one socket write): a session without tools answers in this one round trip.
    const [version, stored] = await guard(() =>
      Promise.all([this.redis.hget(this.keys.session(ref), 'toolsVersion'), this.redis.strlen(this.keys.clientTools(ref))]),
    );
    if (version !== null || stored === 0) return version ?? '';
    return (await this.snapshot(ref)).version;
  }

  /**
   * The list's bytes with their version, read together (one MULTI, on the connection `readerFor`
   * picks): what a catalog is built from and kept under. Null bytes when none is stored.
   */
  async snapshot(ref: SessionRef): Promise<{ version: string; bytes: Buffer | null }> {
    const reader = await this.readerFor(ref);
    const multi = reader.multi().getBuffer(this.keys.clientTools(ref)).hget(this.keys.session(ref), 'toolsVersion');
    const [bytes, version] = (await execMulti(multi)) as [Buffer | null, string | null];
    if (bytes === null) return { version: '', bytes };
    return { version: version ?? createHash('sha1').update(bytes).digest('hex'), bytes };
  }

  /** The session's client tools and the version of the list (for `putIfUnchanged`). */
  async read(ref: SessionRef): Promise<ClientToolsRead> {
    // One MULTI: the list and its version of the same moment.
    const multi = this.redis.multi().get(this.keys.clientTools(ref)).hget(this.keys.session(ref), 'toolsVersion');
    const [json, version] = (await execMulti(multi)) as [string | null, string | null];
    if (json === null) return { tools: [], version: '' };
    return { tools: parseTools(json), version: version ?? createHash('sha1').update(json, 'utf8').digest('hex') };
  }
}

function parseTools(json: string): RegisteredClientTool[] {
  try {
    return JSON.parse(json) as RegisteredClientTool[];
  } catch (err) {
    throw new StoreCommandError(err);
  }
}
