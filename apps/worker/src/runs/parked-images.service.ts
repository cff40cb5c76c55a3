import { Inject, Injectable } from '@nestjs/common';
import { BRIDGE_METHODS, ShellConfigSchema, type SessionRef } from '@codemode/contracts';
import { ParkedImageStore, type StoredParkedImage } from '@codemode/events';
import type { WaitingOutcome } from '@codemode/cells';
import type { Logger } from '@codemode/telemetry';
import { z } from 'zod';
import { LOGGER } from '../core/tokens';
import type { WorkerRun } from './worker-run';

/** What the worker keeps of a parked run beside its VM image (SPEC §12), as JSON in the image's record. */
export const ParkedHostRecordSchema = z.object({
  /** Output bytes returned by the run's calls so far, this park's included. */
  priorOutputBytes: z.number().int().nonnegative(),
  /** Written by older builds only: run.requested records them now (recordedSpec). */
  shell: ShellConfigSchema.optional(),
  agentId: z.string().nullable().optional(),
  /** The calls open at the park, in request order; `inFlight`: dispatched (not queued, not a yield). */
  calls: z.array(z.object({ id: z.string(), method: z.enum(BRIDGE_METHODS), args: z.unknown(), inFlight: z.boolean() })),
  /** The tool host's counters and buffered store writes (`RunToolHost.parkedState`). */
  host: z.object({
    counts: z.object({ searchCount: z.number(), describeCount: z.number(), callCount: z.number() }),
    storeWrites: z.array(z.tuple([z.string(), z.string().nullable()])),
  }),
});
export type ParkedHostRecord = z.infer<typeof ParkedHostRecordSchema>;

/** A stored image with its worker-side record. */
export interface LoadedParkedImage {
  stored: StoredParkedImage;
  record: ParkedHostRecord;
}

/**
 * Parked-run images in Redis (SPEC §12): captured when a run parks and written with its
 * `run.parked` in one step, before the park is acknowledged, so any worker can resume the run once
 * this one is gone; read by the worker that restores it; removed when the run ends (else they
 * expire when the run does).
 */
@Injectable()
export class ParkedImages {
  constructor(
    private readonly store: ParkedImageStore,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * The image of a run that just parked, with its worker-side record, as its park records it
   * (RunLedger.park writes both in one step); null when its VM could not be captured (it parks in
   * memory only).
   */
  capture(run: WorkerRun, outcome: WaitingOutcome): StoredParkedImage | null {
    const image = outcome.image;
    if (!image) {
      this.logger.warn({ runId: run.runId }, 'parked run has no image; it lives only in this worker');
      return null;
    }
    const inFlight = new Set(image.inFlight);
    const record: ParkedHostRecord = {
      priorOutputBytes: run.priorOutputBytes,
      calls: outcome.pending.map((call) => ({ id: call.id, method: call.method, args: call.args, inFlight: inFlight.has(call.id) })),
      host: run.host.parkedState(),
    };
    return {
      image: Buffer.from(image.bytes.buffer, image.bytes.byteOffset, image.bytes.byteLength),
      wasmHash: image.wasmHash,
      preludeVersion: image.preludeVersion,
      epoch: run.epoch,
      host: JSON.stringify(record),
    };
  }

  /** The run's image and record; null when there is none or its record does not parse. */
  async load(ref: SessionRef, runId: string): Promise<LoadedParkedImage | null> {
    const stored = await this.store.get(ref, runId);
    if (!stored) return null;
    const parsed = ParkedHostRecordSchema.safeParse(JSON.parse(stored.host));
    if (!parsed.success) {
      this.logger.warn({ runId, issue: parsed.error.issues[0]?.message }, 'parked run image record does not parse; not restored');
      return null;
    }
    return { stored, record: parsed.data };
  }

  /** The run ended: its image goes (best effort; it expires anyway). */
  drop(ref: SessionRef, runId: string): void {
    this.store.delete(ref, runId).catch((error: unknown) => this.logger.warn({ runId, err: error }, 'could not remove a parked run image'));
  }
}
