import { SPEC_DEFAULT_LIMITS } from '@codemode/config';
import type { GuestCatalog, HandleMetadata, Limits } from '@codemode/contracts';
import type { CellOutcome, WaitingOutcome } from '@codemode/cells';
import type { CellRunRequest } from '../engine/types';

/** SPEC §8 defaults, for specs. */
export const DEFAULT_TEST_LIMITS: Limits = { ...SPEC_DEFAULT_LIMITS };

let counter = 0;

export function cell(code: string, limits: Partial<Limits> = {}, awaitResults?: boolean): CellRunRequest {
  counter += 1;
  return { runId: `run-${counter}`, code, limits: { ...DEFAULT_TEST_LIMITS, ...limits }, awaitResults };
}
/** The runId of the last request `cell` made. */
cell.lastRunId = (): string => `run-${counter}`;

export function waiting(outcome: CellOutcome): WaitingOutcome {
  if (outcome.status !== 'waiting') throw new TypeError(`expected waiting, got ${JSON.stringify(outcome)}`);
  return outcome;
}

export const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function failure(outcome: CellOutcome): { code: string; phase: string; error: string } {
  if (outcome.status !== 'failed') throw new TypeError(`expected a failure, got ${JSON.stringify(outcome)}`);
  return { code: outcome.code, phase: outcome.phase, error: outcome.error };
}

export function valueOf(outcome: CellOutcome): string {
  if (outcome.status !== 'completed') throw new TypeError(`expected completion, got ${JSON.stringify(outcome)}`);
  return outcome.valueJson;
}

/** Metadata of a test tool (a client tool unless `source` says otherwise). */
export function toolMetadata(callableName: string, extra: Partial<HandleMetadata> = {}): HandleMetadata {
  return { callableName, toolName: callableName, description: `the ${callableName} tool`, source: 'client', ...extra };
}

/**
 * A GuestCatalog with one global per name, as JSON text (`CellRunRequest.catalogJson`); names
 * listed in `replaySafe` are replay-safe.
 */
export function testCatalog(
  names: readonly string[],
  options: {
    replaySafe?: readonly string[];
    idempotent?: readonly string[];
    mcp?: GuestCatalog['mcp'];
    surfaces?: GuestCatalog['surfaces'];
  } = {},
): string {
  const catalog: GuestCatalog = {
    globals: names.map((name) => ({
      metadata: toolMetadata(name),
      replaySafe: options.replaySafe?.includes(name) ?? false,
      ...(options.idempotent?.includes(name) ? { idempotent: true } : {}),
    })),
    mcp: options.mcp ?? [],
    ...(options.surfaces ? { surfaces: options.surfaces } : {}),
  };
  return JSON.stringify(catalog);
}
