import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TestStack } from './utils/test-stack';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..');
const run = promisify(execFile);

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * A command in the install folder with only PATH and HOME of the runner's environment: no
 * npm_config_* of the jest run, no CODEMODE_* settings, no NODE_PATH into the repository.
 */
async function inFolder(cwd: string, file: string, args: string[]): Promise<Ran> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/**
 * SPEC §18: the client built and packed as @codemode/client, installed from its tarball into a
 * folder outside the repository with npm `--offline` and an empty private cache, so nothing can
 * come from the registry or from this machine's npm cache: its one dependency, zod, is packed from
 * the repository's node_modules beside it. Then used from there as a user would: require, import,
 * type-checked against its .d.ts, and its `codemode` bin against a real API and worker.
 */
describe('@codemode/client package', () => {
  let stack: TestStack;
  let tmp: string;
  let app: string;
  let tarball: string;

  beforeAll(async () => {
    tmp = realpathSync(mkdtempSync(join(tmpdir(), 'codemode-client-package-')));
    const packs = join(tmp, 'packs');
    app = join(tmp, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'client-package-e2e', private: true }));
    const [started, built] = await Promise.all([
      TestStack.start(),
      run(process.execPath, [join(ROOT, 'scripts/build-client-package.js'), packs], { cwd: ROOT }),
    ]);
    stack = started;
    tarball = built.stdout.trim();
    const zod = await run('npm', ['pack', join(ROOT, 'node_modules/zod'), '--ignore-scripts', '--json', '--pack-destination', packs]);
    const zodTarball = join(packs, (JSON.parse(zod.stdout) as { filename: string }[])[0].filename);
    const installed = await inFolder(app, 'npm', [
      'install',
      '--offline',
      '--cache',
      join(tmp, 'npm-cache'),
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      zodTarball,
      tarball,
    ]);
    expect(installed).toMatchObject({ code: 0 });
  });
  afterAll(async () => {
    await stack?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('ships the compiled client, its types and the bin, and depends on zod only', async () => {
    const listed = (await run('tar', ['-tzf', tarball])).stdout.split('\n');
    for (const file of [
      'package/dist/client/src/index.js',
      'package/dist/client/src/index.d.ts',
      'package/dist/index.mjs',
      'package/dist/index.d.mts',
      'package/dist/client/src/cli/main.js',
      'package/dist/contracts/src/index.d.ts',
      'package/README.md',
    ]) {
      expect(listed).toContain(file);
    }
    expect(listed.filter((file) => /\.spec\.|\.map$|\/apps\/|\/test\//.test(file))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules/@codemode/client/package.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: '@codemode/client', bin: { codemode: 'dist/client/src/cli/main.js' } });
    expect(Object.keys(manifest.dependencies)).toEqual(['zod']);
    expect(manifest.peerDependenciesMeta).toEqual({ '@modelcontextprotocol/sdk': { optional: true } });
  });

  it('loads with require and with import, one class for both, from the installed folder', async () => {
    writeFileSync(
      join(app, 'use.cjs'),
      `const client = require('@codemode/client');
       console.log(JSON.stringify({ from: require.resolve('@codemode/client'), client: typeof client.CodeModeClient, error: typeof client.CodeModeApiError }));`,
    );
    writeFileSync(
      join(app, 'use.mjs'),
      `import { createRequire } from 'node:module';
       import { CodeModeClient, CodeModeApiError } from '@codemode/client';
       const required = createRequire(import.meta.url)('@codemode/client');
       console.log(JSON.stringify({ client: typeof CodeModeClient, sameClass: CodeModeClient === required.CodeModeClient && CodeModeApiError === required.CodeModeApiError }));`,
    );
    const cjs = await inFolder(app, process.execPath, ['use.cjs']);
    expect(cjs.stderr).toBe('');
    expect(JSON.parse(cjs.stdout)).toEqual({
      from: join(app, 'node_modules/@codemode/client/dist/client/src/index.js'),
      client: 'function',
      error: 'function',
    });
    const esm = await inFolder(app, process.execPath, ['use.mjs']);
    expect(esm.stderr).toBe('');
    expect(JSON.parse(esm.stdout)).toEqual({ client: 'function', sameClass: true });
  });

  it('type-checks a CommonJS and an ES module against its .d.ts (wrong input is a type error)', async () => {
    const use = (from: string): string => `import { CodeModeClient, CodeModeApiError, type CodeModeResult, type Policy } from '${from}';
const client = new CodeModeClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'key' });
export const result: Promise<CodeModeResult> = client.exec('s', { title: 't', code: 'return 1' });
export const policy: Promise<Policy> = client.putPolicy({ rules: [{ tool: 'github.*', decision: 'approve' }] });
export const status = (error: CodeModeApiError): number => error.status;
// @ts-expect-error a policy decision is allow, deny or approve
client.putPolicy({ rules: [{ tool: 'x', decision: 'maybe' }] });
// @ts-expect-error an exec input has a title
client.exec('s', { code: 'return 1' });
`;
    writeFileSync(join(app, 'check.ts'), use('@codemode/client'));
    writeFileSync(join(app, 'check.mts'), use('@codemode/client'));
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'node16',
          moduleResolution: 'node16',
          target: 'ES2022',
          strict: true,
          noEmit: true,
          // The package's own .d.ts are checked through their use below (an unresolved type would
          // be `any` and leave the @ts-expect-error lines unused); zod's are not re-checked here.
          skipLibCheck: true,
          // @types/node from the repository: a user's own project brings its own.
          typeRoots: [join(ROOT, 'node_modules/@types')],
          types: ['node'],
        },
        files: ['check.ts', 'check.mts'],
      }),
    );
    const checked = await inFolder(app, join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json']);
    expect(checked.stdout).toBe('');
    expect(checked.code).toBe(0);
  });

  it('serves the library and its codemode bin against a running service', async () => {
    writeFileSync(
      join(app, 'call.cjs'),
      `const { CodeModeClient, CodeModeApiError } = require('@codemode/client');
       const client = new CodeModeClient({ baseUrl: process.argv[2] });
       (async () => {
         const result = await client.exec('pkg-lib', { title: 'lib', code: 'return 6 * 7' });
         const missing = await client.getSession('never-created').catch((error) => error);
         await client.putSkill('notes', { description: 'house notes', content: '# notes' });
         const skills = (await client.listSkills()).skills;
         const policy = await client.putPolicy({ rules: [{ tool: 'github.*', decision: 'approve' }] });
         const approvals = (await client.listApprovals()).approvals;
         const deleted = await client.deleteSession('pkg-lib');
         console.log(JSON.stringify({ status: result.status, value: result.value, apiError: missing instanceof CodeModeApiError, code: missing.status, skills, policy, approvals, deleted }));
       })();`,
    );
    const called = await inFolder(app, process.execPath, ['call.cjs', stack.baseUrl]);
    expect(JSON.parse(called.stdout)).toEqual({
      status: 'completed',
      value: 42,
      apiError: true,
      code: 404,
      skills: [{ name: 'notes', description: 'house notes' }],
      policy: { rules: [{ tool: 'github.*', decision: 'approve' }] },
      approvals: [],
      deleted: { sessionId: 'pkg-lib', deleted: true, abortedRuns: [] },
    });

    const codemode = join(app, 'node_modules/.bin/codemode');
    const help = await inFolder(app, codemode, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: codemode <command> \[options\]/);

    writeFileSync(join(app, 'cell.js'), 'console.log("from the package"); return 6 * 7;');
    const executed = await inFolder(app, codemode, ['exec', 'cell.js', '--url', stack.baseUrl, '-s', 'pkg-bin']);
    expect(executed).toEqual({ code: 0, stdout: 'from the package\n42\n', stderr: '' });
    expect((await stack.client().getRun('pkg-bin', (await stack.client().listRuns('pkg-bin')).runs[0].runId)).title).toBe('cell.js');

    // The MCP SDK is an optional peer: without it, `codemode mcp` says what to install.
    const mcp = await inFolder(app, codemode, ['mcp', '--url', stack.baseUrl]);
    expect(mcp.code).toBe(1);
    expect(mcp.stderr).toBe(
      'codemode: codemode mcp needs the MCP SDK installed beside @codemode/client: npm install @modelcontextprotocol/sdk@^1.32.2\n',
    );
  });
});
