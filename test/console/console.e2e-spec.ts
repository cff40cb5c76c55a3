import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { CodeModeClient } from '@codemode/client';
import { putJson, RecordingServer } from '../approvals/approval-helpers';
import { TestStack } from '../utils/test-stack';
import { launchChromium, step } from './browser';

/**
 * The operator console in a real Chromium against the built api and worker, with API keys: the
 * key form, a session created through the API, a run's timeline, a live event, abort, the fleet.
 * `CODEMODE_CONSOLE_SCREENSHOT=docs/console.png` also refreshes the README's screenshot.
 */
const run = randomBytes(4).toString('hex');
const KEY_ALPHA = `ka-${run}`;
const KEY_BETA = `kb-${run}`;
const README_SHOT = process.env.CODEMODE_CONSOLE_SCREENSHOT;

let stack: TestStack;
let alpha: CodeModeClient;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let parkedRunId: string;

beforeAll(async () => {
  stack = await TestStack.start({
    apiKeys: `${KEY_ALPHA}:alpha,${KEY_BETA}:beta`,
    env: { CODEMODE_SHELL_SANDBOX: 'none', CODEMODE_TENANCY: 'single' },
  });
  alpha = stack.client(KEY_ALPHA);
  await alpha.putSession('ops-1', { agentId: 'support-bot' });
  expect(
    await alpha.exec('ops-1', { title: 'sum the numbers', code: 'console.log("adding"); return [1, 2, 3].reduce((a, b) => a + b)' }),
  ).toMatchObject({
    status: 'completed',
    value: 6,
  });
  const parked = await alpha.exec('ops-1', {
    title: 'wait for a go',
    code: 'console.log("parking"); await yield_control(); return "done"',
  });
  if (parked.status !== 'waiting') throw new Error(`expected a parked run, got ${JSON.stringify(parked)}`);
  parkedRunId = parked.runId;
  await stack.client(KEY_BETA).exec('beta-secret-session', { title: 'beta', code: 'return 1' });
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on('dialog', (dialog) => void dialog.accept());
}, 90_000);

/** What the run view shows of a JSON text: at most 2048 characters, then a marker. */
function shown(whole: string): string {
  return whole.length <= 2048 ? whole : `${whole.slice(0, 2048)}… (cut: 2048 of ${whole.length} characters shown)`;
}

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await stack?.stop();
});

describe('operator console', () => {
  it('loads without a key, asks for one, and refuses a wrong one', async () => {
    await step(page, 'key-form', async () => {
      const res = await page.goto(`${stack.baseUrl}/console`);
      expect(res?.status()).toBe(200);
      await page.getByRole('heading', { name: 'Enter an API key' }).waitFor();
      await page.locator('#api-key').fill('not-a-key');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByText('The API refused this key (401). Check it and try again.').waitFor();
    });
  });

  it("shows the tenant's session created through the API, and only that tenant's", async () => {
    await step(page, 'sessions', async () => {
      await page.locator('#api-key').fill(KEY_ALPHA);
      await page.getByRole('button', { name: 'Continue' }).click();
      const row = page.locator('tr[data-session="ops-1"]');
      await row.waitFor();
      expect(await row.locator('td').allInnerTexts()).toEqual(expect.arrayContaining(['ops-1', 'support-bot', '0', '1']));
      expect(await page.locator('tr[data-session]').count()).toBe(1);
      expect(await page.content()).not.toContain('beta-secret-session');
      expect(await page.evaluate(() => sessionStorage.getItem('codemode.console.apiKey'))).toBe(KEY_ALPHA);
      expect(await page.evaluate(() => localStorage.length)).toBe(0);
    });
  });

  it("opens a session and a run, and draws the run's timeline", async () => {
    await step(page, 'run-timeline', async () => {
      await page.getByRole('link', { name: 'ops-1' }).click();
      await page.locator('tr[data-run]').nth(1).waitFor();
      expect(await page.locator('tr[data-run] td:first-child').allInnerTexts()).toEqual(['wait for a go', 'sum the numbers']);
      await page.getByRole('link', { name: 'sum the numbers' }).click();
      await page.locator('#run-timeline').waitFor();
      expect(await page.locator('#run-timeline title').first().textContent()).toMatch(/^Run timeline: 1 legs and parks, 0 tool calls, /);
      expect(await page.locator('#run-timeline .tl-leg').count()).toBe(1);
      await page.locator('#run-code').getByText('console.log("adding")').waitFor();
      expect(await page.locator('#run-output').textContent()).toBe('adding');
      expect(await page.locator('#run-result').textContent()).toContain('"value": 6');
    });
  });

  it('appends a new event live and shows the new run without a reload', async () => {
    await step(page, 'live', async () => {
      await page.goto(`${stack.baseUrl}/console#/sessions/ops-1`);
      await page.locator('#live-events li[data-type="run.parked"]').first().waitFor();
      const before = await page.locator('#live-events li').count();
      expect(await alpha.exec('ops-1', { title: 'arrives live', code: 'return "live"' })).toMatchObject({ status: 'completed' });
      await page.locator('#live-events li', { hasText: 'arrives live' }).waitFor();
      await page.locator('#live-events li[data-type="run.completed"]').nth(1).waitFor();
      expect(await page.locator('#live-events li').count()).toBeGreaterThan(before);
      await page.locator('tr[data-run] td:first-child', { hasText: 'arrives live' }).waitFor();
      if (README_SHOT) await page.screenshot({ path: join(__dirname, '..', '..', README_SHOT) });
    });
  });

  it('aborts a parked run', async () => {
    await step(page, 'abort', async () => {
      await page.getByRole('link', { name: 'wait for a go' }).click();
      await page.locator('#run-timeline .tl-park').waitFor();
      await page.locator('.badge-waiting').first().waitFor();
      await page.getByRole('button', { name: 'Abort run' }).click();
      await page.locator('.fact .badge-failed').waitFor();
      expect(await page.locator('#run-result').textContent()).toContain('"code": "aborted"');
      expect(await page.getByRole('button', { name: 'Abort run' }).count()).toBe(0);
      expect(await alpha.getRun('ops-1', parkedRunId)).toMatchObject({ status: 'failed' });
    });
  });

  it("shows a tool call's input and output, or says the log did not keep them", async () => {
    const safe = await alpha.exec('ops-5', { title: 'list, replay-safe', code: 'return await ls({})', restartSafe: true });
    const unsafe = await alpha.exec('ops-5', { title: 'list', code: 'return await ls({})' });
    expect([safe.status, unsafe.status]).toEqual(['completed', 'completed']);
    const events = (await alpha.events('ops-5', { limit: 1000 })).events;
    const runOf = (title: string): string => events.find((e) => e.type === 'run.requested' && e.data.title === title)?.runId ?? '';
    const [safeRun, unsafeRun] = [runOf('list, replay-safe'), runOf('list')];
    const called = events.find((e) => e.runId === safeRun && e.type === 'tool.called');
    const settled = events.find((e) => e.runId === safeRun && e.type === 'tool.settled');
    expect(called?.data).toMatchObject({ tool: 'ls', input: {} });
    expect(settled?.data).toHaveProperty('result');
    await step(page, 'tool-io', async () => {
      await page.goto(`${stack.baseUrl}/console#/sessions/ops-5/runs/${safeRun}`);
      const call = page.locator(`li[data-call="${String(called?.data.callId)}"]`);
      await call.locator('.call-state', { hasText: /^ok in / }).waitFor();
      expect(await call.locator('.call-tool').textContent()).toBe('ls');
      expect(await call.locator('.call-input').textContent()).toBe('{}');
      expect(await call.locator('.call-output').textContent()).toBe(shown(JSON.stringify(settled?.data.result, null, 2)));

      await page.goto(`${stack.baseUrl}/console#/sessions/ops-5/runs/${unsafeRun}`);
      const plain = page.locator('li[data-call]');
      await plain.locator('.call-state', { hasText: /^ok in / }).waitFor();
      expect(await plain.locator('.call-input').textContent()).toBe('not recorded (run not replay-safe); 2 bytes');
      expect(await plain.locator('.call-output').textContent()).toMatch(/^not recorded \(run not replay-safe\); \d+ bytes$/);
    });
  });

  it('draws a platform-answered call as waiting for the platform, answers it from the console, and keeps labels in their boxes', async () => {
    const tool = `ask_${'the_operator_'.repeat(9)}`;
    // The longest title there is (120 characters), in wide letters: wider than its heading.
    const title = `answer from the console ${'W'.repeat(96)}`;
    await alpha.putTools('ops-6', [{ name: tool, description: 'answered by the platform' }]);
    const asked = await alpha.exec('ops-6', { title, code: `const a = await ${tool}({ q: 1 }); return a.n + 1;` });
    if (asked.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(asked)}`);
    const pad = 'x'.repeat(3000);
    await step(page, 'platform-call', async () => {
      await page.goto(`${stack.baseUrl}/console#/sessions/ops-6/runs/${asked.runId}`);
      const call = page.locator('li[data-call="bridge:callValue:1"]');
      await call.locator('.call-state', { hasText: 'waiting for the platform' }).waitFor();
      expect(await page.locator('#run-timeline .tl-platform title').textContent()).toMatch(/: \S+ \S+ waiting for the platform$/);
      // Not replay-safe, but the run parked for the call and its waiting answer lists the input.
      expect(await call.locator('.call-input').textContent()).toBe(JSON.stringify({ q: 1 }, null, 2));
      await call.locator('textarea').fill('{n: 41}');
      await call.getByRole('button', { name: 'Send answer' }).click();
      await call.getByText('The value is not JSON: write e.g. {"n": 41}, "text" or 42.').waitFor();
      await call.locator('textarea').fill(JSON.stringify({ n: 41, pad }));
      await call.getByRole('button', { name: 'Send answer' }).click();
      await page.getByText('The API answered 202: {"accepted":1}. The run takes it at its next wait.').waitFor();
    });
    expect(await alpha.wait('ops-6', asked.runId)).toMatchObject({ status: 'completed', value: 42 });
    await step(page, 'platform-answered', async () => {
      await page.locator('.fact .badge-completed').waitFor();
      const call = page.locator('li[data-call="bridge:callValue:1"]');
      await call.locator('.call-state', { hasText: /^ok/ }).waitFor();
      expect(await call.locator('form').count()).toBe(0);
      const whole = JSON.stringify({ n: 41, pad }, null, 2);
      expect(await call.locator('.call-output').textContent()).toBe(
        `${whole.slice(0, 2048)}… (cut: 2048 of ${whole.length} characters shown)`,
      );
      await page.locator('#run-timeline .tl-label', { hasText: tool }).waitFor();
      // Each label stays inside its box; one cut short ends in an ellipsis and carries the whole text as its tooltip.
      const labels = await page.locator('.label-fit').evaluateAll((elements) =>
        elements.map((el) => {
          const own = el.getBoundingClientRect();
          const box = el.parentElement!.getBoundingClientRect();
          const style = el.ownerDocument.defaultView!.getComputedStyle(el);
          return {
            text: el.textContent,
            title: el.getAttribute('title'),
            inside: own.left >= box.left - 1 && own.right <= box.right + 1,
            cut: el.scrollWidth > el.clientWidth,
            fits: style.overflowX === 'hidden' && style.textOverflow === 'ellipsis' && style.whiteSpace === 'nowrap',
          };
        }),
      );
      // The heading, the timeline row, the call's name, and the run's request in its events.
      expect(labels.filter((l) => l.text === tool || l.text === title)).toHaveLength(4);
      for (const label of labels) {
        expect(label).toMatchObject({ inside: true, fits: true, title: label.text });
      }
      expect(labels.filter((l) => l.cut).map((l) => l.text)).toEqual(expect.arrayContaining([tool, title]));
    });
  });

  it("shows the fleet with the tenant's live runs and paired nodes only", async () => {
    const parked = await alpha.exec('ops-2', { title: 'parked for the fleet', code: 'await yield_control(); return 1' });
    expect(parked.status).toBe('waiting');
    // A node's connection, held open by this test for the page to list it.
    const connection = new AbortController();
    const stream = alpha.connectNode({ name: 'console-node', platform: 'linux', commands: ['device.status'] }, connection.signal);
    expect((await stream.next()).value).toMatchObject({ event: 'paired' });
    await step(page, 'fleet', async () => {
      await page.getByRole('link', { name: 'Fleet' }).click();
      const worker = page.locator('tr[data-worker]');
      await worker.waitFor();
      expect(await worker.count()).toBe(1);
      await worker.getByRole('link', { name: 'parked for the fleet' }).waitFor();
      expect(await page.locator('.fact', { hasText: 'Workers alive' }).textContent()).toBe('Workers alive1');
      const node = page.locator('tr[data-node]');
      await node.waitFor();
      expect(await node.count()).toBe(1);
      expect(await node.locator('td').first().textContent()).toBe('console-node');
      await node.getByText('connected').waitFor();
    });
    connection.abort();
    await stream.return(undefined);
  });

  it('approves a pending approval, and the cell goes on', async () => {
    const put = await alpha.raw('PUT', '/v1/policy', {
      body: JSON.stringify({ rules: [{ tool: 'ls', decision: 'approve' }] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(put.status).toBe(200);
    // The exec stays open while the approval waits (SPEC §11).
    const held = alpha.exec('ops-3', { title: 'needs a yes', code: 'await ls({}); return "approved"' });
    await step(page, 'approvals', async () => {
      await page.getByRole('link', { name: 'Approvals' }).click();
      const card = page.locator('article[data-approval]');
      await card.waitFor();
      expect(await card.locator('h2 .mono').textContent()).toBe('ls');
      await card.getByLabel('Reason').fill('looks fine');
      await card.getByRole('button', { name: 'Approve' }).click();
    });
    expect(await held).toMatchObject({ status: 'completed', value: 'approved' });
    await step(page, 'approvals-empty', async () => {
      await page.getByText('No approvals are waiting.').waitFor();
    });
  });

  it("shows a client tool's endpoint on its approval card", async () => {
    const hook = await RecordingServer.start(() => ({ refunded: true }));
    try {
      const endpoint = `${hook.url}/refund`;
      const put = await putJson(alpha, 'PUT', '/v1/sessions/ops-4', { policy: { rules: [{ tool: 'refund', decision: 'approve' }] } });
      expect(put.status).toBe(200);
      await alpha.putTools('ops-4', [{ name: 'refund', description: 'Refunds an order', endpoint }]);
      const held = alpha.exec('ops-4', { title: 'refund', code: 'return await refund({ order: 7 })' });
      await step(page, 'approval-endpoint', async () => {
        await page.getByRole('link', { name: 'Approvals' }).click();
        const card = page.locator('article[data-approval]');
        await card.waitFor();
        expect(await card.locator('[data-endpoint]').textContent()).toBe(endpoint);
        await card.getByRole('button', { name: 'Approve' }).click();
      });
      expect(await held).toMatchObject({ status: 'completed', value: { refunded: true } });
      expect(hook.requests.map((r) => r.url)).toEqual(['/refund']);
    } finally {
      await hook.close();
    }
  });
});
