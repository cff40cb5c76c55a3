import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandEnvironment, nodeHandlers } from './node-handlers';

describe('the reference node commands (codemode node)', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'node-handlers-'));
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'docs', 'a.md'), 'hello');
    symlinkSync('/etc', join(root, 'escape'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const handlers = (allow: string[] = ['fs.listDir', 'system.run']) => nodeHandlers({ root, allow, commands: new Map() });
  const opts = { timeoutMs: 2000 };

  it('serves device.status always, fs.listDir and system.run only when allowed', () => {
    expect([...handlers([]).keys()]).toEqual(['device.status']);
    expect([...handlers().keys()]).toEqual(['device.status', 'fs.listDir', 'system.run']);
  });

  it('lists entries under the root, and never outside it (.., absolute paths, symlinks out)', async () => {
    const listDir = handlers().get('fs.listDir')!;
    expect(await listDir({ path: 'docs' }, opts)).toEqual({ path: 'docs', entries: [{ name: 'a.md', type: 'file', size: 5 }] });
    expect(await listDir({}, opts)).toMatchObject({ path: '.', entries: [{ name: 'docs' }, { name: 'escape', type: 'symlink' }] });
    await expect(listDir({ path: '..' }, opts)).rejects.toThrow("path .. is outside the node's root.");
    await expect(listDir({ path: '/etc' }, opts)).rejects.toThrow("outside the node's root");
    await expect(listDir({ path: 'escape' }, opts)).rejects.toThrow("outside the node's root");
    await expect(listDir({ path: 'missing' }, opts)).rejects.toThrow('no such directory: missing');
  });

  it('runs system.run in the root and kills it at its timeout', async () => {
    const run = handlers().get('system.run')!;
    expect(await run({ command: 'pwd; echo err >&2; exit 2' }, opts)).toMatchObject({
      exitCode: 2,
      stdout: `${root}\n`,
      stderr: 'err\n',
      timedOut: false,
    });
    expect(await run({ command: 'sleep 5' }, { timeoutMs: 200 })).toMatchObject({ timedOut: true });
    await expect(run({}, opts)).rejects.toThrow('system.run needs a command.');
  });

  it("runs system.run and a --command without the node's own variables (its key), with the call's env", async () => {
    const planted = { CODEMODE_API_KEY: 'node-operator-key', CODEMODE_URL: 'http://127.0.0.1:1', NODE_SECRET: 'node-secret' };
    Object.assign(process.env, planted);
    try {
      const dump = join(root, 'dump-env.sh');
      writeFileSync(dump, '#!/bin/sh\nprintf \'{"env":"%s"}\' "$(env | tr \'\\n\' \' \')"\n', { mode: 0o755 });
      const ran = (await handlers().get('system.run')!({ command: 'env', env: { CALLER_VAR: 'given' } }, opts)) as { stdout: string };
      const external = (await nodeHandlers({ root, allow: [], commands: new Map([['dump', dump]]) }).get('dump')!({}, opts)) as {
        env: string;
      };

      for (const seen of [ran.stdout, external.env]) {
        for (const [name, value] of Object.entries(planted)) {
          expect(seen).not.toContain(name);
          expect(seen).not.toContain(value);
        }
        expect(seen).toContain(`PATH=${process.env.PATH}`);
      }
      expect(ran.stdout).toContain('CALLER_VAR=given');
    } finally {
      for (const name of Object.keys(planted)) delete process.env[name];
    }
  });

  it('keeps only the listed node variables, then the call env (string values only)', () => {
    expect(commandEnvironment({ PATH: '/bin', HOME: '/h', CODEMODE_API_KEY: 'k', SECRET: 's' }, { A: 'a', B: 2, PATH: '/x' })).toEqual({
      PATH: '/x',
      HOME: '/h',
      A: 'a',
    });
  });

  it('runs a --command with the params on stdin, its JSON output the result; a non-zero exit is an error', async () => {
    const commands = new Map([
      ['echo', join(root, 'echo.sh')],
      ['fail', join(root, 'fail.sh')],
    ]);
    writeFileSync(commands.get('echo')!, '#!/bin/sh\nread line\nprintf \'{"got":%s}\' "$line"\n', { mode: 0o755 });
    writeFileSync(commands.get('fail')!, '#!/bin/sh\necho broken >&2\nexit 4\n', { mode: 0o755 });
    const served = nodeHandlers({ root, allow: [], commands });
    expect(await served.get('echo')!({ a: 1 }, opts)).toEqual({ got: { a: 1 } });
    await expect(served.get('fail')!({}, opts)).rejects.toThrow('command fail exited with code 4: broken');
  });
});
