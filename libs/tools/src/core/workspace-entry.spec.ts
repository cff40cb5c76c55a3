import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { WorkspacePathNotFoundError } from '../errors';
import { createTestWorkspace, type TestWorkspace } from './test-support';
import { openGuestPath, type WorkspaceEntry } from './workspace-entry';
import { closeWorkspace, openWorkspace, type Workspace } from './workspace-path';

describe('openGuestPath (SPEC §10 "Paths tell nothing")', () => {
  let ws: TestWorkspace;
  let workspace: Workspace;

  beforeEach(async () => {
    ws = await createTestWorkspace();
    await ws.write('src/a.txt', 'inside\n');
    workspace = await openWorkspace(ws.root);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await closeWorkspace(workspace);
    await ws.cleanup();
  });

  /** What a guest path opens: its workspace-relative real path and content, or the error message. */
  async function outcome(input: string): Promise<string> {
    let entry: WorkspaceEntry;
    try {
      entry = await openGuestPath(workspace, input);
    } catch (error) {
      return `error: ${(error as Error).message}`;
    }
    try {
      if (entry.kind !== 'file') {
        return `${entry.kind} ${entry.relative}`;
      }
      const bytes = Buffer.alloc(entry.stats.size);
      await entry.read(bytes, 0, bytes.length, 0);
      return `file ${entry.relative}: ${bytes.toString('utf8').trim()}`;
    } finally {
      await entry.close();
    }
  }
  const escapes = (input: string) => `error: path escapes the workspace: ${input}`;
  const link = (target: string, name: string) => symlink(target, path.join(ws.root, name));

  it('opens relative and in-workspace absolute paths, with `..` applied lexically', async () => {
    await expect(outcome('src/a.txt')).resolves.toBe('file src/a.txt: inside');
    await expect(outcome('./src/../src/a.txt')).resolves.toBe('file src/a.txt: inside');
    await expect(outcome(path.join(ws.root, 'src/a.txt'))).resolves.toBe('file src/a.txt: inside');
    await expect(outcome('/workspace/src/a.txt')).resolves.toBe('file src/a.txt: inside');
    await expect(outcome('')).resolves.toBe('directory .');
    await expect(outcome('/workspace')).resolves.toBe('directory .');
  });

  it('refuses `..` above the root and absolute paths elsewhere with the SPEC message', async () => {
    for (const input of ['..', '../outside/secret.txt', 'src/../../outside', '/etc/passwd', '/workspace/../etc/passwd', '/workspaces/x']) {
      await expect(outcome(input)).resolves.toBe(escapes(input));
    }
    await mkdir(`${ws.root}-evil`);
    await expect(outcome(`${ws.root}-evil`)).resolves.toBe(escapes(`${ws.root}-evil`));
  });

  it('answers a link leading out the same whether its target exists or not', async () => {
    await writeFile(path.join(ws.outside, 'file.txt'), 'outside\n');
    const targets = {
      'rel-file': '../outside/secret.txt',
      'rel-missing': '../outside/missing.txt',
      'rel-dir': '../outside',
      'rel-missing-dir': '../nowhere',
      'abs-file': path.join(ws.outside, 'secret.txt'),
      'abs-missing': path.join(ws.outside, 'missing.txt'),
      'abs-etc': '/etc/passwd',
      'abs-missing-root': '/no/such/path',
    };
    for (const [name, target] of Object.entries(targets)) {
      await link(target, name);
    }
    await link('rel-file', 'chain-file');
    await link('rel-missing', 'chain-missing');
    const inputs = [
      ...Object.keys(targets),
      'chain-file',
      'chain-missing',
      'rel-dir/secret.txt',
      'rel-dir/missing.txt',
      'rel-missing-dir/x',
    ];
    const answers = await Promise.all(inputs.map((input) => outcome(input)));
    expect(answers).toEqual(inputs.map(escapes));
  });

  it('follows links that stay inside: relative, absolute as the host or the sandbox spells them, chains, and directories on the way', async () => {
    await link('src/a.txt', 'rel');
    await link(path.join(ws.root, 'src/a.txt'), 'abs-host');
    await link('/workspace/src/a.txt', 'abs-sandbox');
    await link('rel', 'chain');
    await link('src', 'dir-link');
    await link('../src/a.txt', 'src/up-and-back');
    await link('.', 'self');
    for (const input of ['rel', 'abs-host', 'abs-sandbox', 'chain', 'dir-link/a.txt', 'src/up-and-back', 'self/self/src/a.txt']) {
      await expect(outcome(input)).resolves.toBe('file src/a.txt: inside');
    }
    await expect(outcome('dir-link')).resolves.toBe('directory src');
    await expect(outcome('self')).resolves.toBe('directory .');
  });

  it('says not found for missing paths inside, links to them included, without the host path', async () => {
    await link('src/missing.txt', 'dangling');
    const notFound = (input: string) => `error: ${new WorkspacePathNotFoundError(input).message}`;
    await expect(outcome('nope.txt')).resolves.toBe(notFound('nope.txt'));
    await expect(outcome('src/a.txt/below')).resolves.toBe(notFound('src/a.txt/below'));
    await expect(outcome('dangling')).resolves.toBe(notFound('dangling'));
    expect(notFound('nope.txt')).toBe('error: Path not found: nope.txt. Use ls or find to see what exists in the workspace.');
  });

  it('fails a link loop with ELOOP instead of following it forever', async () => {
    await link('loop-b', 'loop-a');
    await link('loop-a', 'loop-b');
    await expect(openGuestPath(workspace, 'loop-a')).rejects.toMatchObject({ code: 'ELOOP' });
  });

  it('never opens, stats or resolves anything outside the workspace, not even a link target that exists', async () => {
    await link(path.join(ws.outside, 'secret.txt'), 'abs');
    await link('../outside/secret.txt', 'rel');
    await link('src', 'inside');
    const touched: string[] = [];
    for (const name of ['open', 'lstat', 'stat', 'readlink', 'realpath', 'readdir', 'opendir', 'access'] as const) {
      const original = fs[name] as (...args: unknown[]) => unknown;
      jest.spyOn(fs, name).mockImplementation(((first: unknown, ...rest: unknown[]) => {
        touched.push(String(first));
        return original.call(fs, first, ...rest);
      }) as never);
    }
    for (const input of ['abs', 'rel', 'abs/x', 'inside/a.txt', '../outside/secret.txt', path.join(ws.outside, 'secret.txt')]) {
      await outcome(input);
    }
    expect(touched.length).toBeGreaterThan(0);
    // Every lookup is one name inside a directory already open (through its descriptor), or the
    // workspace root itself, opened by the tool call.
    expect(touched.filter((touchedPath) => !/^\/proc\/self\/fd\/\d+\/[^/]+$/u.test(touchedPath))).toEqual([]);
  });

  it('never opens a FIFO planted in the workspace, so it cannot block: it is described as `other`', async () => {
    execFileSync('mkfifo', [path.join(ws.root, 'pipe')]);
    await link('pipe', 'pipe-link');
    const opened = jest.spyOn(fs, 'open');
    await expect(outcome('pipe')).resolves.toBe('other pipe');
    await expect(outcome('pipe-link')).resolves.toBe('other pipe');
    expect(opened).not.toHaveBeenCalled();
  });

  it('looks again at a name swapped for a symlink between its lstat and its open, and refuses it when it leads out', async () => {
    const lstat = fs.lstat;
    let swapped = false;
    jest.spyOn(fs, 'lstat').mockImplementation((async (at: string) => {
      const info = await lstat(at);
      if (!swapped && at.endsWith('/src')) {
        swapped = true;
        await rm(path.join(ws.root, 'src'), { recursive: true });
        await symlink(ws.outside, path.join(ws.root, 'src'));
      }
      return info;
    }) as never);
    await expect(outcome('src/secret.txt')).resolves.toBe(escapes('src/secret.txt'));
    expect(swapped).toBe(true);
  });

  it('reads the file it opened even when its path is swapped for a link afterwards', async () => {
    const entry = await openGuestPath(workspace, 'src/a.txt');
    try {
      await rm(path.join(ws.root, 'src'), { recursive: true });
      await symlink(ws.outside, path.join(ws.root, 'src'));
      const bytes = Buffer.alloc(entry.stats.size);
      await entry.read(bytes, 0, bytes.length, 0);
      expect(bytes.toString('utf8')).toBe('inside\n');
    } finally {
      await entry.close();
    }
  });

  it('never gets outside while another process keeps swapping a directory on the path for a link out', async () => {
    await writeFile(path.join(ws.outside, 'a.txt'), 'top secret\n');
    // A real race: a shell loop renames the directory back and forth with a symlink to `outside`.
    // It stops at the end of a round once `stop` exists, so no rename is left running when the
    // workspace is removed (a killed loop's last `mv` could still land during the cleanup).
    const stop = path.join(ws.outside, 'stop');
    const swapper = spawn(
      'sh',
      [
        '-c',
        `cd '${ws.root}' && ln -s '${ws.outside}' out && while [ ! -e '${stop}' ]; do mv src real; mv out src; mv src out; mv real src; done`,
      ],
      { stdio: 'ignore' },
    );
    const stopped = new Promise((resolve) => swapper.once('exit', resolve));
    const answers = new Set<string>();
    try {
      for (let attempt = 0; attempt < 400; attempt += 1) {
        answers.add(await outcome('src/a.txt'));
      }
    } finally {
      await writeFile(stop, '');
      await stopped;
    }
    expect([...answers].filter((answer) => answer.includes('secret') || answer.includes('outside'))).toEqual([]);
    expect([...answers].every((answer) => answer === 'file src/a.txt: inside' || answer.startsWith('error: '))).toBe(true);
  });
});
