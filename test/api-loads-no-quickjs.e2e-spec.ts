import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');
const APP_MODULE = join(ROOT, 'dist/apps/api/src/app.module.js');

/**
 * The modules the built API module loads that belong to the engine: QuickJS, or anything of
 * libs/sandbox (whose index loads QuickJS and hashes the guest sources). Run in a fresh process,
 * so nothing the test runner loaded counts.
 */
function engineModulesLoadedByApi(): string[] {
  const script = `
    require(${JSON.stringify(APP_MODULE)});
    const root = ${JSON.stringify(ROOT)};
    const engine = Object.keys(require.cache)
      .map((file) => require('node:path').relative(root, file))
      .filter((file) => /quickjs/i.test(file) || file.startsWith('dist/libs/sandbox/'));
    process.stdout.write(JSON.stringify(engine));
  `;
  const child = spawnSync(process.execPath, ['-e', script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
    encoding: 'utf8',
  });
  if (child.status !== 0) throw new Error(`requiring the API module failed (${child.status}): ${child.stderr}`);
  return JSON.parse(child.stdout) as string[];
}

describe('the API process', () => {
  it('loads neither QuickJS nor libs/sandbox', () => {
    expect(existsSync(APP_MODULE)).toBe(true); // npm run build first
    expect(engineModulesLoadedByApi()).toEqual([]);
  });
});
