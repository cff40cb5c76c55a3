import type { AppConfig } from '@codemode/config';
import type { RedisClient } from './platform/redis';
import { ApprovalLedger } from './ledgers/approval-ledger';
import { ClientToolsLedger } from './ledgers/client-tools-ledger';
import { EventLog } from './log/event-log';
import type { KeySpace } from './platform/keys';
import { McpTaskStore } from './runs/mcp-task-store';
import { ParkedImageStore } from './runs/parked-image-store';
import { LiveRunIndex, ParkedRunIndex } from './runs/parked-run-index';
import { RunningLegIndex } from './runs/running-leg-index';
import { PolicyStore } from './ledgers/policy-store';
import { RunLedger } from './runs/run-ledger';
import { RunIds } from './runs/run-ids';
import { RunListing } from './runs/run-listing';
import { ScriptLoader, type EventsScriptSettings } from './platform/script-loader';
import { SessionIndex } from './log/session-index';
import { SessionLedger } from './ledgers/session-ledger';
import { SessionRemoval } from './ledgers/session-removal';
import { SkillLedger } from './ledgers/skill-ledger';
import { StoredBytesLedger } from './ledgers/stored-bytes-ledger';
import { TenantToolsLedger } from './ledgers/tenant-tools-ledger';

interface EventStoresOptions {
  readonly redis: RedisClient;
  readonly keys: KeySpace;
  /** What the scripts are built with (retention, the run history cap, session expiry); the rest default. */
  readonly settings: Partial<EventsScriptSettings>;
}

/**
 * What a deployment's configuration compiles into this library's scripts: retention and the
 * per-run history cap (SPEC §6), session expiry (§10). The API and the workers build their stores
 * with the same settings, so their scripts agree.
 */
export function eventStoreSettings(config: Pick<AppConfig, 'history' | 'tenancySettings' | 'compactRuns'>): Partial<EventsScriptSettings> {
  return { ...config.history, sessionTtlSeconds: config.tenancySettings.sessionTtlSeconds, compactRuns: config.compactRuns };
}

/** Every store of this library that needs only Redis and the keys, over one loader. */
export interface EventStores {
  /** The loader they all run their scripts through, for other libs' classes that run these scripts (libs/store's `SessionStore`). */
  readonly scripts: ScriptLoader;
  readonly log: EventLog;
  readonly runs: RunLedger;
  readonly sessions: SessionLedger;
  readonly clientTools: ClientToolsLedger;
  readonly liveRuns: LiveRunIndex;
  readonly parkedRuns: ParkedRunIndex;
  readonly runningLegs: RunningLegIndex;
  readonly parkedImages: ParkedImageStore;
  readonly policies: PolicyStore;
  readonly approvals: ApprovalLedger;
  readonly sessionIndex: SessionIndex;
  readonly runListing: RunListing;
  readonly runIds: RunIds;
  readonly storedBytes: StoredBytesLedger;
  readonly sessionRemoval: SessionRemoval;
  readonly skills: SkillLedger;
  readonly tenantTools: TenantToolsLedger;
  readonly mcpTasks: McpTaskStore;
}

/**
 * The stores of a process, built once at boot over ONE `ScriptLoader` built with the deployment's
 * settings: a ledger built with the default loader instead would append with the default
 * retention, history cap and session TTL.
 */
export function createEventStores({ redis, keys, settings }: EventStoresOptions): EventStores {
  const scripts = ScriptLoader.withSettings(settings);
  return {
    scripts,
    log: new EventLog(redis, keys, scripts),
    runs: new RunLedger(redis, keys, scripts),
    sessions: new SessionLedger(redis, keys, scripts),
    clientTools: new ClientToolsLedger(redis, keys, scripts),
    liveRuns: new LiveRunIndex(redis, keys),
    parkedRuns: new ParkedRunIndex(redis, keys),
    runningLegs: new RunningLegIndex(redis, keys),
    parkedImages: new ParkedImageStore(redis, keys),
    policies: new PolicyStore(redis, keys),
    approvals: new ApprovalLedger(redis, keys, scripts),
    sessionIndex: new SessionIndex(redis, keys, scripts),
    runListing: new RunListing(redis, keys, scripts.defined('RETENTION_MS') ?? 0),
    runIds: new RunIds(redis, keys, scripts),
    storedBytes: new StoredBytesLedger(redis, keys, scripts),
    sessionRemoval: new SessionRemoval(redis, keys, scripts),
    skills: new SkillLedger(redis, keys, scripts),
    tenantTools: new TenantToolsLedger(redis, keys, scripts),
    mcpTasks: new McpTaskStore(redis, keys, scripts),
  };
}
