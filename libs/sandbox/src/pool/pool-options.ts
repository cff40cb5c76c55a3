import type { SandboxVariant } from '../engine/types';
import type { PoolLogger } from './pool-thread';

/** Runs that may be parked at once in a pool unless it says otherwise (SPEC §3: 64 per worker process). */
export const DEFAULT_MAX_PARKED = 64;

/** What a `SandboxPool` is built with. */
export interface SandboxPoolOptions {
  /** Number of worker threads; each executes one VM at a time but may hold several live runs. */
  threads: number;
  logger?: PoolLogger;
  /** QuickJS build. @default 'release' ('debug' adds assertions and leak checks; for tests) */
  variant?: SandboxVariant;
  /**
   * A GuestCatalog (JSON text) whose tool handles every thread's boot image holds prepared: a run
   * whose catalog has globals with the same metadata takes them instead of building its own, which
   * was most of a cell's start (the worker passes the core tools' catalog). It is in every
   * tenant's VM memory (out of reach of JS): only what every tenant may see belongs in it, never a
   * tenant-scoped tool. @default none
   */
  preparedCatalogJson?: string;
  /** How long past a leg's deadline the watchdog waits before terminating its thread. @default 300 */
  watchdogGraceMs?: number;
  /** Runs that may be parked at once in this pool (SPEC §3: 64 per worker process). @default 64 */
  maxParked?: number;
  /** Wasm memory parked VMs may keep together; past it the coldest leave for their images (SPEC §10). @default Infinity */
  maxParkedMemoryBytes?: number;
  /** VMs one tenant may keep parked here (SPEC §10: half of `maxParked` in multi-tenant mode). @default () => maxParked */
  maxParkedPerTenant?: () => number;
  /**
   * Threads whose guest time one tenant may hold at once: executing its code, or about to begin
   * its leg (SPEC §10: half of `threads`, rounded up, in multi-tenant mode). A tenant's cell waits
   * in the queue while it holds that many, so cells stuck in a native builtin until the watchdog
   * never take every thread from the other tenants. @default () => threads
   */
  maxGuestThreadsPerTenant?: () => number;
}

/** What a `SandboxPool` reports of itself (`stats()`). */
export interface SandboxPoolStats {
  threads: number;
  /** Ready threads with at least one run/resume in progress. */
  busy: number;
  idle: number;
  starting: number;
  parked: number;
  /** Wasm memory of the VMs of parked (and resuming) runs, in bytes. */
  parkedMemoryBytes: number;
}

/** Parked runs that died with their thread (the watchdog terminated it, or it exited). */
export type RunsLostListener = (runIds: string[], reason: string) => void;
