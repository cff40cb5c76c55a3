import { CodeModeClient } from '@codemode/client';
import { TestStack } from './utils/test-stack';

jest.setTimeout(90_000);

/**
 * The upgrade from new cells as BullMQ jobs to new cells on the shard streams (contract §13's
 * upgrade notes): workers first, then APIs. A worker on `stream` still runs the BullMQ cell jobs an
 * API on `bullmq` queued, before it started and while it runs, so no cell in flight is lost; APIs
 * on either path then serve one deployment side by side until the last old one is gone.
 */
describe('upgrading cell dispatch from BullMQ jobs to the shard streams', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ workers: 0, env: { CODEMODE_CELL_DISPATCH: 'bullmq' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('runs the old path’s queued and new cells on an upgraded worker, and the new path’s beside them', async () => {
    const old = stack.client();
    // Queued as a BullMQ job while no worker runs (the old workers are gone).
    const queued = old.exec('before', { title: 'queued', code: 'return "queued on bullmq"' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    await stack.addWorker({ CODEMODE_CELL_DISPATCH: 'stream' });
    expect(await queued).toMatchObject({ status: 'completed', value: 'queued on bullmq' });
    expect(await old.exec('during', { title: 'old api', code: 'return 1 + 1' })).toMatchObject({ status: 'completed', value: 2 });

    const upgraded = await stack.addApi(undefined, { CODEMODE_CELL_DISPATCH: 'stream' });
    const fresh = new CodeModeClient({ baseUrl: upgraded.baseUrl });
    expect(await fresh.exec('during', { title: 'new api', code: 'return 3' })).toMatchObject({ status: 'completed', value: 3 });
    expect(await old.exec('during', { title: 'old api again', code: 'return 4' })).toMatchObject({ status: 'completed', value: 4 });
    const types = (await fresh.events('during')).events.map((event) => event.type).filter((type) => type.startsWith('run.'));
    expect(types).toEqual([...Array<string[]>(3)].flatMap(() => ['run.requested', 'run.started', 'run.completed']));
  });
});
