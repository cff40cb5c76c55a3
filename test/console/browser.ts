import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it when missing). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Where failing browser tests leave a screenshot (gitignored). */
export const ARTIFACTS = join(__dirname, '..', '..', 'test-artifacts', 'console');

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  // --no-sandbox: CI runs as root, where Chromium refuses its own sandbox.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/**
 * Runs one browser step; when it throws, saves a full-page screenshot named after the step under
 * test-artifacts/console/ and rethrows, so the failure shows what the operator would have seen.
 */
export async function step<T>(page: Page, name: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    const file = join(ARTIFACTS, `${name.replace(/[^a-z0-9-]+/gi, '-')}.png`);
    mkdirSync(dirname(file), { recursive: true });
    await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    throw error;
  }
}
