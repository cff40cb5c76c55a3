import { InvalidEventError, StaleEpochError } from '@codemode/events';
import { createWorkerMetrics, type Logger } from '@codemode/telemetry';
import { meteredWrite } from './metered-ledgers';

describe('meteredWrite', () => {
  it('times every write and counts only the ones fencing refused', async () => {
    const metrics = createWorkerMetrics('test');
    const warnings: unknown[][] = [];
    const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger;
    const meter = { metrics, logger };
    await expect(meteredWrite(meter, () => Promise.resolve('ok'))).resolves.toBe('ok');
    await expect(meteredWrite(meter, () => Promise.reject(new StaleEpochError('cm_x', 1, 2)))).rejects.toBeInstanceOf(StaleEpochError);
    await expect(meteredWrite(meter, () => Promise.reject(new InvalidEventError('nope')))).rejects.toBeInstanceOf(InvalidEventError);
    expect(warnings).toEqual([
      [{ runId: 'cm_x', epoch: 1, runEpoch: 2 }, 'write refused: stale epoch (the run was taken over by another worker)'],
    ]);
    const text = await metrics.scrape();
    expect(text).toContain('codemode_event_append_duration_seconds_count 3');
    expect(text).toContain('codemode_stale_writes_rejected_total 1');
  });
});
