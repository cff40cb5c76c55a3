import type { AppConfig } from '@codemode/config';
import type { CellJob } from '@codemode/contracts';
import type { RunRecovery } from '../recovery/run-recovery.service';
import type { CellRunner } from '../runs/cell-runner.service';
import { EntryAck } from '../runs/entry-ack';
import { CellWork } from './cell-work';
import { IdleLegs } from './idle-legs';

type Claim = Awaited<ReturnType<CellRunner['run']>>;

/** What a delivered cell comes to, whichever transport brought it (SPEC §6 re-delivery). */
function work(claim: Claim, recovered: boolean): { cells: CellWork; recoveries: string[] } {
  const recoveries: string[] = [];
  const runner = { run: () => Promise.resolve(claim) } as unknown as CellRunner;
  const recovery = {
    recoverStalled: (job: CellJob) => {
      recoveries.push(job.runId);
      return Promise.resolve(recovered);
    },
  } as unknown as RunRecovery;
  const idleLegs = new IdleLegs({ waitsOnHost: () => false, tenantCap: () => 1 });
  return { cells: new CellWork({ presenceTtlMs: 10_001 } as AppConfig, runner, recovery, idleLegs), recoveries };
}

const cell = { tenant: 'acme', sessionId: 's1', runId: 'r1', replyTo: 'x', requestedAt: 0 } as CellJob;

describe('CellWork', () => {
  it('is done with a cell it claimed, or one whose run is no longer requested nor running, without recovery', async () => {
    for (const claim of [{ started: true }, { started: false, status: 'completed' }, { started: false, status: null }] as Claim[]) {
      const { cells, recoveries } = work(claim, false);
      await expect(cells.runCell(cell)).resolves.toBe('done');
      expect(recoveries).toEqual([]);
    }
  });

  it('recovers a run found running (a re-delivery), and looks again later while its owner is alive', async () => {
    const recovered = work({ started: false, status: 'running' }, true);
    await expect(recovered.cells.runCell(cell)).resolves.toBe('done');
    expect(recovered.recoveries).toEqual(['r1']);
    const deferred = work({ started: false, status: 'running' }, false);
    await expect(deferred.cells.runCell(cell)).resolves.toBe('later');
    expect(deferred.cells.lookAgainMs).toBe(5_001);
  });

  it('a stream entry whose run is absent is claimed again three times (its request may land just after it), then dropped, whatever its age', async () => {
    const claims = (answers: Claim[]) => {
      let sent = 0;
      const runner = {
        run: () => {
          sent += 1;
          return Promise.resolve(answers.shift() ?? { started: false, status: null });
        },
      } as unknown as CellRunner;
      const idleLegs = new IdleLegs({ waitsOnHost: () => false, tenantCap: () => 1 });
      const cells = new CellWork({ presenceTtlMs: 10_001 } as AppConfig, runner, {} as RunRecovery, idleLegs);
      return { cells, sent: () => sent };
    };
    const fresh = { ...cell, requestedAt: Date.now() };
    const ack = () => new EntryAck(() => Promise.resolve());
    const landsLate = claims([{ started: false, status: null }, { started: true }]);
    await expect(landsLate.cells.runCell(fresh, ack())).resolves.toBe('done');
    expect(landsLate.sent()).toBe(2);
    const never = claims([]);
    await expect(never.cells.runCell(fresh, ack())).resolves.toBe('done');
    expect(never.sent()).toBe(4);
    // Stamped by an API host whose clock is 5 s behind this worker's: the same three claims again.
    const skewed = claims([{ started: false, status: null }, { started: true }]);
    await expect(skewed.cells.runCell({ ...cell, requestedAt: Date.now() - 5_000 }, ack())).resolves.toBe('done');
    expect(skewed.sent()).toBe(2);
    // A BullMQ job (no entry) is never claimed again: its request was answered before it was queued.
    const job = claims([]);
    await expect(job.cells.runCell(fresh)).resolves.toBe('done');
    expect(job.sent()).toBe(1);
  });
});
