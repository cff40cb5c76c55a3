import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import type { CodeModeClient } from '@codemode/client';
import { METRIC } from '@codemode/telemetry';
import { launchChromium, step } from '../console/browser';
import { TestStack } from '../utils/test-stack';

/**
 * SPEC §10 "Tenants see their own numbers", in multi-tenant mode: `GET /v1/fleet` shows a tenant
 * its own runs and the fleet's configured capacity, never another tenant's runs nor occupancy
 * (busy threads, parked runs, queue depth); the API's `/metrics` is on API_METRICS_PORT, and the
 * public port answers 404 for it. The console's fleet page works with the trimmed view.
 */
jest.setTimeout(120_000);

const run = randomBytes(4).toString('hex');
const keys = { alpha: `na-${run}`, beta: `nb-${run}` };
/** What a multi-tenant fleet view may show of a worker's report: its capacity. */
const CAPACITY_ONLY = { startedAt: expect.any(String), threads: 2, cellSlots: 16, parkedSlots: 64 };

let stack: TestStack;
let alpha: CodeModeClient;
let beta: CodeModeClient;
let parkedRunId: string;
let browser: Browser | undefined;

beforeAll(async () => {
  stack = await TestStack.start({ apiKeys: `${keys.alpha}:alpha,${keys.beta}:beta` });
  alpha = stack.client(keys.alpha);
  beta = stack.client(keys.beta);
  const parked = await alpha.exec(`a-parked-${run}`, { title: 'alpha parked', code: 'await yield_control(); return 1' });
  if (parked.status !== 'waiting') throw new Error(`expected a parked run, got ${JSON.stringify(parked)}`);
  parkedRunId = parked.runId;
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

test("beta's fleet view holds none of alpha's runs and no occupancy, while alpha parks one run and keeps a thread busy", async () => {
  const busy = alpha.exec(`a-busy-${run}`, { title: 'alpha spins', code: 'const t = Date.now(); while (Date.now() - t < 2000); return 2' });
  await new Promise((resolve) => setTimeout(resolve, 700));
  // Workers report every quarter lease; several looks cover reports written while alpha's cells hold the worker.
  const views = [];
  for (let i = 0; i < 4; i += 1) {
    views.push(await beta.fleet());
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  expect(await busy).toMatchObject({ status: 'completed', value: 2 });
  for (const fleet of views) {
    expect(fleet.workers).toHaveLength(1);
    expect(fleet.workers[0].report).toEqual(CAPACITY_ONLY);
    expect(fleet.workers[0].runs).toEqual({ running: [], parked: [] });
    expect(fleet.capacity).toEqual({ workers: 1, threads: 2, cellSlots: 16, parkedSlots: 64 });
    expect(fleet.queue).toBeNull();
    expect(fleet.unheld).toEqual([]);
    const text = JSON.stringify(fleet);
    for (const hidden of [parkedRunId, `a-parked-${run}`, `a-busy-${run}`, 'busyThreads', 'parkedRuns']) expect(text).not.toContain(hidden);
  }
});

test('alpha sees its own parked run on the worker, with the same capacity and no occupancy', async () => {
  const fleet = await alpha.fleet();
  expect(fleet.workers[0].runs.parked).toEqual([
    { sessionId: `a-parked-${run}`, runId: parkedRunId, title: 'alpha parked', status: 'waiting' },
  ]);
  expect(fleet.workers[0].report).toEqual(CAPACITY_ONLY);
  expect(fleet.queue).toBeNull();
});

test('/metrics answers 404 on the public port and is served on API_METRICS_PORT', async () => {
  const pub = await fetch(`${stack.baseUrl}/metrics`);
  expect(pub.status).toBe(404);
  expect(await pub.text()).not.toContain(METRIC.buildInfo);
  const scrape = await fetch(`${stack.apiMetricsUrl}/metrics`);
  expect(scrape.status).toBe(200);
  expect(await scrape.text()).toContain(METRIC.buildInfo);
});

test("the console's fleet page shows capacity and the tenant's own run, without queue or occupancy", async () => {
  browser = await launchChromium();
  const page: Page = await (await browser.newContext()).newPage();
  page.setDefaultTimeout(10_000);
  await step(page, 'multi-fleet', async () => {
    await page.goto(`${stack.baseUrl}/console`);
    await page.locator('#api-key').fill(keys.alpha);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('link', { name: 'Fleet' }).click();
    const worker = page.locator('tr[data-worker]');
    await worker.getByRole('link', { name: 'alpha parked' }).waitFor();
    expect(await page.locator('.fact', { hasText: 'Workers alive' }).textContent()).toBe('Workers alive1');
    expect(await page.locator('.fact', { hasText: 'Sandbox threads' }).textContent()).toBe('Sandbox threads2');
    expect(await page.locator('.fact', { hasText: 'Cells waiting' }).count()).toBe(0);
    expect(await page.getByRole('columnheader', { name: 'Parked (all tenants)' }).count()).toBe(0);
  });
});
