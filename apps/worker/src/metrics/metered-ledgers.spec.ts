import { InvalidEventError, StaleEpochError } from '@codemode/events';
import { createWorkerMetrics } from '@codemode/telemetry';
import { meteredWrite } from './metered-ledgers';

describe('meteredWrite', () => {
  it('times every write and counts only the ones fencing refused', async () => {
    const metrics = createWorkerMetrics('test');
    await expect(meteredWrite(metrics, () => Promise.resolve('ok'))).resolves.toBe('ok');
    await expect(meteredWrite(metrics, () => Promise.reject(new StaleEpochError('cm_x', 1, 2)))).rejects.toBeInstanceOf(StaleEpochError);
    await expect(meteredWrite(metrics, () => Promise.reject(new InvalidEventError('nope')))).rejects.toBeInstanceOf(InvalidEventError);
    const text = await metrics.scrape();
    expect(text).toContain('codemode_event_append_duration_seconds_count 3');
    expect(text).toContain('codemode_stale_writes_rejected_total 1');
  });
});
