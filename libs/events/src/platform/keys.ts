import { SESSION_ID_PATTERN, type SessionRef } from '@codemode/contracts';
import { InvalidKeyError } from './errors';

/** Tenant ids are `[A-Za-z0-9_-]`: no `:`, so the first `:` in the hash tag ends the tenant. */
const TENANT_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
/** A prefix with braces would move the Redis Cluster hash tag out of the session part. */
const PREFIX_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;

/** The keys every append script receives, in this order (see lua/includes/append.lua). */
export type SessionScriptKeys = [stream: string, session: string, run: string, transcript: string, runs: string];

/**
 * Builds every Redis key of the event log. Session keys share the hash tag `{<tenant>:<sid>}`,
 * so a session's keys live in one Redis Cluster slot and one script may touch all of them.
 */
export class KeySpace {
  /** @param prefix first segment of every key. @default 'cm' */
  constructor(readonly prefix = 'cm') {
    if (!PREFIX_PATTERN.test(prefix)) throw new InvalidKeyError('prefix', prefix);
  }

  /** `<p>:{<tenant>:<sid>}`: the part every key of one session starts with. */
  sessionBase(ref: SessionRef): string {
    if (!TENANT_PATTERN.test(ref.tenant)) throw new InvalidKeyError('tenant', ref.tenant);
    if (!SESSION_ID_PATTERN.test(ref.sessionId)) throw new InvalidKeyError('sessionId', ref.sessionId);
    return `${this.prefix}:{${ref.tenant}:${ref.sessionId}}`;
  }

  events(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:events`;
  }

  session(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:session`;
  }

  run(ref: SessionRef, runId: string): string {
    return `${this.sessionBase(ref)}:run:${runId}`;
  }

  transcript(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:transcript`;
  }

  /** An MCP task of the session (SPEC §14 Tasks): hash of its record (McpTaskStore). */
  mcpTask(ref: SessionRef, taskId: string): string {
    return `${this.sessionBase(ref)}:mcp-task:${taskId}`;
  }

  /** Sorted set of the session's MCP task ids, scored by creation time (ms): `tasks/list`. */
  mcpTasks(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:mcp-tasks`;
  }

  /** Hash of runId → how many task-augmented waits the run had: the `n` of `<runId>:w<n>`. */
  mcpTaskWaits(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:mcp-task-waits`;
  }

  /** Sorted set of the session's runIds, scored by request time (ms). */
  runs(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:runs`;
  }

  /** Hash of the session's finished runs kept as one record each: runId → record (lua/includes/run-record.lua). */
  pastRuns(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:past`;
  }

  /**
   * Set while a live tail follows the session's log (EventLog.follow): a run folded meanwhile keeps
   * its last entry in the stream to wake the tail (lua/includes/fold-run.lua).
   */
  followed(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:followed`;
  }

  /**
   * The keys a read of a session's log by id or by page touches (read-events-page.lua,
   * read-log-events.lua): its stream, runs index, finished runs' records, those retention cut
   * through, and its session hash.
   */
  logReadKeys(ref: SessionRef): string[] {
    return [this.events(ref), this.runs(ref), this.pastRuns(ref), this.pastRunsCut(ref), this.session(ref)];
  }

  /** Sorted set of the folded runs retention cut through (requested before its point, ended after it), by request ms. */
  pastRunsCut(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:past-cut`;
  }

  /**
   * The committed session store (`store`/`load`): hash of field = the store key as JSON string
   * text (so lone surrogates survive the trip to Redis) → the value's JSON text, verbatim.
   */
  store(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:store`;
  }

  /** The session's client tools as registered (`PUT /tools`): one JSON array, endpoints included. */
  clientTools(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:tools`;
  }

  /** A client tool list on its way in (`ClientToolsLedger`): written, then renamed onto `clientTools`. */
  stagedClientTools(ref: SessionRef, version: string): string {
    return `${this.sessionBase(ref)}:tools-staged:${version}`;
  }

  /** The session's skills (SPEC §15): hash of skill name → its description. */
  sessionSkills(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:skills`;
  }

  /** The session's skills' Markdown: hash of skill name → its content. */
  sessionSkillDocs(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:skill-docs`;
  }

  /** A session's skill set on its way in (`SkillLedger`): written, then renamed onto `sessionSkills`/`sessionSkillDocs`. */
  stagedSessionSkills(ref: SessionRef, version: string): [descriptions: string, docs: string] {
    return [`${this.sessionBase(ref)}:skills-staged:${version}`, `${this.sessionBase(ref)}:skill-docs-staged:${version}`];
  }

  /** Sorted set of the session's live results references: id scored by its expiry (Redis ms). */
  resultsIndex(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:results:index`;
  }

  /** Hash of results reference id → its size in bytes (the shared-bytes accounting). */
  resultsSizes(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:results:sizes`;
  }

  /** One saved result's JSON text; expires with its reference. */
  resultItem(ref: SessionRef, id: string): string {
    return `${this.sessionBase(ref)}:results:item:${id}`;
  }

  /** The session log's stored bytes per time bucket of stream ids (lua/includes/stored-bytes.lua). */
  storedLog(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:stored-log`;
  }

  /** The buckets `storedLog` holds, by time: what a trim gives back. */
  storedMinutes(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:stored-minutes`;
  }

  /** A parked run's VM image and host state (SPEC §12, ParkedImageStore); expires with the run's snapshot TTL. */
  parkedImage(ref: SessionRef, runId: string): string {
    return `${this.sessionBase(ref)}:image:${runId}`;
  }

  idempotency(ref: SessionRef, key: string): string {
    return `${this.sessionBase(ref)}:idem:${key}`;
  }

  /** A `wait` Idempotency-Key's record (runId, token of the wait, its answer's event once known); per route, so apart from exec's. */
  waitIdempotency(ref: SessionRef, key: string): string {
    return `${this.sessionBase(ref)}:wait-idem:${key}`;
  }

  /**
   * An earlier release's tenant-wide run → session record, written per exec so that `wait` could
   * tell "another session" from "unknown"; read for those releases' run ids until the records expire.
   */
  runLocation(tenant: string, runId: string): string {
    return `${this.prefix}:runloc:${tenant}:${runId}`;
  }

  /** The deployment's secret key for run ids (RunIds): 32 random bytes, hex. */
  runIdKey(): string {
    return `${this.prefix}:run-id-key`;
  }

  /** Pub/sub channel on which workers push answers to one API instance. */
  reply(instanceId: string): string {
    return `${this.prefix}:reply:${instanceId}`;
  }

  /** Pub/sub channel on which the API tells every worker to remove a deleted session's workspace. */
  workspaceRemovals(): string {
    return `${this.prefix}:workspace-removals`;
  }

  /** The five keys every append script takes; `runId` may be '' for session-level events. */
  scriptKeys(ref: SessionRef, runId: string): SessionScriptKeys {
    return [this.events(ref), this.session(ref), this.run(ref, runId), this.transcript(ref), this.runs(ref)];
  }

  /**
   * `{<prefix>:<queue>}`: the BullMQ prefix of one queue. Each queue is its own hash tag, so on a
   * Redis Cluster the queues (cell shards, the shell queue, every worker's own) spread over the
   * slots while each queue's keys stay in one (BullMQ's scripts need that).
   */
  queuePrefix(queue: string): string {
    return `{${this.prefix}:${queue}}`;
  }

  /**
   * `{<prefix>:<queue>}:stream` (lane `first`) and `…:stream:rest`: the streams of new cells of one
   * cell-queue shard (SPEC §13, `CODEMODE_CELL_DISPATCH=stream`), in the shard queue's hash tag
   * beside its BullMQ keys (which all continue with `:<queue>:`), so a shard's dispatch stays in one
   * Cluster slot and one read names both lanes. The `first` lane keeps the key the single stream
   * had, so entries written before the lanes existed are read as `first`.
   */
  cellStream(queue: string, lane: 'first' | 'rest'): string {
    return lane === 'first' ? `${this.queuePrefix(queue)}:stream` : `${this.queuePrefix(queue)}:stream:rest`;
  }

  /** A worker's presence (its lease): present while the worker is alive. */
  workerAlive(workerId: string): string {
    return `${this.prefix}:alive:${workerId}`;
  }

  /** What a worker reports about itself for the fleet view (JSON); expires with its lease. */
  workerReport(workerId: string): string {
    return `${this.prefix}:worker-report:${workerId}`;
  }

  /**
   * Sorted set of the tenant's session ids by last write (ms): the operator listing (SessionIndex).
   * The tenant is the hash tag, like its quota keys.
   */
  tenantSessions(tenant: string): string {
    if (!TENANT_PATTERN.test(tenant)) throw new InvalidKeyError('tenant', tenant);
    return `${this.prefix}:sessions:{${tenant}}`;
  }

  /** Sorted set of worker id → when its own queue was last seen in use (queue janitor). */
  workerQueues(): string {
    return `${this.prefix}:worker-queues`;
  }

  /** The worker serving a shell scope (its "home"). */
  shellHome(tenant: string, scopeKey: string): string {
    return `${this.prefix}:shellhome:${tenant}:${scopeKey}`;
  }

  /** A shell process session id seen recently, so `wait` can tell a caller to use `process`. */
  shellSessionId(tenant: string, id: string): string {
    return `${this.prefix}:shellid:${tenant}:${id}`;
  }

  /** The deployment's MCP catalog snapshot, written by workers, read by the API. */
  deploymentMcp(): string {
    return `${this.prefix}:deployment:mcp`;
  }

  /** One part of the index of every parked run by expiry time, across sessions (ParkedRunIndex). */
  parkedIndex(part: number): string {
    return `${this.prefix}:parked:{${this.prefix}:index-${part}}`;
  }

  /** One part of the index of every run an exec or a wait set going, by when it must have ended or parked (LiveRunIndex). */
  liveIndex(part: number): string {
    return `${this.prefix}:live:{${this.prefix}:index-${part}}`;
  }

  /**
   * Hash of the `restartSafe` legs one worker is running (RunningLegIndex): field = the run, value =
   * its reply channel and when its caller has answered. Its own hash tag per owner, like the
   * worker-owned queues (SPEC §13): a leg's write never shares a slot with another owner's.
   */
  runningLegs(workerId: string): string {
    return `${this.prefix}:running-legs:{${this.prefix}:owner:${workerId}}`;
  }

  /** The deployment's tenancy mode (`multi` | `single`) as the API recorded it (SPEC §10 "Mode"). */
  tenancy(): string {
    return `${this.prefix}:tenancy`;
  }

  /** Hash of tenant → host uid of its shell sandboxes; kept for the deployment's life, like its files. */
  tenantUids(): string {
    return `${this.prefix}:tenant-uids`;
  }

  /** Counter behind `tenantUids`: offsets into the configured uid range handed out so far. */
  tenantUidCounter(): string {
    return `${this.prefix}:tenant-uids:next`;
  }

  /**
   * One tenant's quota bookkeeping (SPEC §10): `inflight`, `streams`, `shell` (leased slots),
   * `parked` and `parked-bytes`, `rate` (token bucket), `stored-bytes`, `stored-until` and
   * `stored-total` (stored bytes, StoredBytesLedger). The tenant is the hash tag, so the parked
   * pair, and the stored three, share a slot.
   */
  tenantQuota(
    tenant: string,
    kind: 'inflight' | 'streams' | 'shell' | 'parked' | 'parked-bytes' | 'rate' | 'stored-bytes' | 'stored-until' | 'stored-total',
  ): string {
    if (!TENANT_PATTERN.test(tenant)) throw new InvalidKeyError('tenant', tenant);
    return `${this.prefix}:quota:{${tenant}}:${kind}`;
  }

  /** The tenant's tool policy (SPEC §11): operator configuration, the one kind of key without a TTL. */
  tenantPolicy(tenant: string): string {
    if (!TENANT_PATTERN.test(tenant)) throw new InvalidKeyError('tenant', tenant);
    return `${this.prefix}:policy:{${tenant}}`;
  }

  /**
   * The tenant's skills (SPEC §15): hash of skill name → description, beside `tenantSkillDocs`
   * (name → content), in the tenant's slot; an operator wrote them, so they never expire.
   */
  tenantSkills(tenant: string): string {
    if (!TENANT_PATTERN.test(tenant)) throw new InvalidKeyError('tenant', tenant);
    return `${this.prefix}:skills:{${tenant}}`;
  }

  tenantSkillDocs(tenant: string): string {
    if (!TENANT_PATTERN.test(tenant)) throw new InvalidKeyError('tenant', tenant);
    return `${this.prefix}:skill-docs:{${tenant}}`;
  }

  /**
   * The tenant's tools (SPEC §18): hash of tool name → its JSON, beside `tenantToolsMeta`
   * (`version`, bumped by every change, and `bytes`, what the tools hold), in the tenant's slot;
   * an operator wrote them, so they never expire.
   */
  tenantTools(tenant: string): string {
    if (!TENANT_PATTERN.test(tenant)) throw new InvalidKeyError('tenant', tenant);
    return `${this.prefix}:tenant-tools:{${tenant}}`;
  }

  tenantToolsMeta(tenant: string): string {
    if (!TENANT_PATTERN.test(tenant)) throw new InvalidKeyError('tenant', tenant);
    return `${this.prefix}:tenant-tools-meta:{${tenant}}`;
  }

  /** The session's own tool policy (SPEC §11), merged over the tenant's: one JSON string. */
  sessionPolicy(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:policy`;
  }

  /** The session's approvals: hash of approvalId → record JSON and `<approvalId>:decision` → decision JSON. */
  approvals(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:approvals`;
  }

  /** Set of the tenant's session ids that have had approvals (`GET /v1/approvals`); pruned as they expire. */
  tenantApprovalSessions(tenant: string): string {
    if (!TENANT_PATTERN.test(tenant)) throw new InvalidKeyError('tenant', tenant);
    return `${this.prefix}:approval-sessions:{${tenant}}`;
  }

  /**
   * The tenant's paired nodes (SPEC §15): hash of nodeId → record JSON. `<base>:<id>:conn` holds the
   * token of the node's live connection (expires unless its API beats it), `<base>:<id>:inbox` is
   * the channel its invocations go on, `<base>:call:<invocationId>` an invocation waiting for its
   * answer. The tenant is the hash tag, so a node's scripts touch one slot.
   */
  tenantNodes(tenant: string): string {
    if (!TENANT_PATTERN.test(tenant)) throw new InvalidKeyError('tenant', tenant);
    return `${this.prefix}:nodes:{${tenant}}`;
  }

  nodeConnection(tenant: string, nodeId: string): string {
    return `${this.tenantNodes(tenant)}:${nodeId}:conn`;
  }

  nodeInbox(tenant: string, nodeId: string): string {
    return `${this.tenantNodes(tenant)}:${nodeId}:inbox`;
  }

  nodeCall(tenant: string, invocationId: string): string {
    return `${this.tenantNodes(tenant)}:call:${invocationId}`;
  }

  /** Pattern matching every key of one session (tests and tooling only; never on a hot path). */
  sessionPattern(ref: SessionRef): string {
    return `${this.sessionBase(ref)}:*`;
  }
}
