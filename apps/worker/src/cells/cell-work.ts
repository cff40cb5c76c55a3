import { Inject, Injectable } from '@nestjs/common';
import type { CellJob } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { withLogContext } from '@codemode/telemetry';
import type { Detached } from '../core/queue-consumer';
import { APP_CONFIG } from '../core/tokens';
import { RunRecovery } from '../recovery/run-recovery.service';
import { CellRunner } from '../runs/cell-runner.service';
import type { EntryAck } from '../runs/entry-ack';
import { absentRunRetryMs } from './absent-run-retry';
import { IdleLegs } from './idle-legs';

/**
 * What a delivery of a new cell comes to: `done`, or `later` when its run is `running` under an
 * owner whose lease has not lapsed yet (the delivery should come back in `lookAgainMs`).
 */
export type CellOutcome = 'done' | 'later';

/**
 * The work of a delivered cell, whichever transport brought it (a BullMQ job of CellsProcessor, a
 * stream entry of CellStreamReaders): the one place that decides what a delivery does, and when
 * its work goes on without its slot (SPEC §10 fate isolation, IdleLegs).
 */
@Injectable()
export class CellWork {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly runner: CellRunner,
    private readonly recovery: RunRecovery,
    private readonly idleLegs: IdleLegs,
  ) {}

  /** How long a delivery answered `later` waits before it is handled again: half a lease. */
  get lookAgainMs(): number {
    return Math.ceil(this.config.presenceTtlMs / 2);
  }

  /**
   * A new cell: claimed and run, or, delivered again after its worker stalled, recovered (SPEC §6).
   * `entryAck`: its stream entry's acknowledgement, sent beside the run's first recorded outcome.
   */
  runCell(cell: CellJob, entryAck?: EntryAck): Promise<CellOutcome> {
    // SPEC §19: the worker's lines of this run carry the id of the request that asked for it.
    return cell.requestId === undefined
      ? this.claimOrRecover(cell, entryAck)
      : withLogContext({ requestId: cell.requestId }, () => this.claimOrRecover(cell, entryAck));
  }

  /** The delivery's work, done here, or let go on without its slot once its leg waits only on the host. */
  async goOn(run: { tenant: string; runId: string }, work: Promise<void>): Promise<void | Detached> {
    if (await this.idleLegs.untilIdle(run.runId, run.tenant, work)) return { goesOn: work };
    await work;
  }

  private async claimOrRecover(cell: CellJob, entryAck: EntryAck | undefined): Promise<CellOutcome> {
    let claim = await this.runner.run(cell, entryAck);
    // A stream entry (its request sent beside it) whose run is absent: absentRunRetryMs decides.
    for (let claims = 1; entryAck && !claim.started && claim.status === null; claims += 1) {
      const waitMs = absentRunRetryMs(claims);
      if (waitMs === null) break;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      claim = await this.runner.run(cell, entryAck);
    }
    // Already running: delivered again after its worker stalled (SPEC §6 recovery). Its owner's
    // lease may not have lapsed yet (a job lock can lapse first): look again later.
    if (claim.started || claim.status !== 'running' || (await this.recovery.recoverStalled(cell))) return 'done';
    return 'later';
  }
}
