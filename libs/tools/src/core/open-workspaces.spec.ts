import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { lsTool } from './ls';
import { OpenWorkspaces } from './open-workspaces';
import { createTestWorkspace, type TestWorkspace } from './test-support';
import type { Workspace } from './workspace-path';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('OpenWorkspaces', () => {
  let ws: TestWorkspace;
  let open: OpenWorkspaces;
  const seen: Workspace[] = [];

  /** The workspace one call is given, kept to look at afterwards. */
  const workspaceOf = (roots: OpenWorkspaces, root = ws.root): Promise<Workspace> =>
    roots.use(root, (workspace) => {
      seen.push(workspace);
      return Promise.resolve(workspace);
    });

  beforeEach(async () => {
    ws = await createTestWorkspace();
    open = new OpenWorkspaces(50, 2);
  });
  afterEach(async () => {
    await sleep(120); // the sweep closes what the test left open
    seen.length = 0;
    await ws.cleanup();
  });

  it('calls in a row share one open root (no open, stat or close between them)', async () => {
    const first = await workspaceOf(open);
    const second = await workspaceOf(open);
    expect(second.rootDir).toBe(first.rootDir);
    expect(second.rootDir.fd).toBeGreaterThan(-1);
  });

  it('each call gets the root as it is now: a directory that grew is not sized by its first stat', async () => {
    const first = await workspaceOf(open);
    await Promise.all(Array.from({ length: 300 }, (_, i) => ws.write(`a-file-with-a-long-name-${i}.txt`, '')));
    const second = await workspaceOf(open);
    expect(second.rootStats.size).toBeGreaterThan(first.rootStats.size);
  });

  it('a root removed and made again (a session deleted, then made under the same id) is opened again: its files are listed, not the old folder', async () => {
    const before = await workspaceOf(open);
    await rm(ws.root, { recursive: true, force: true });
    await mkdir(ws.root);
    await ws.write('new.txt', 'made after\n');
    const listed = await open.use(ws.root, (workspace) => lsTool(workspace, {}));
    expect(listed.entries).toEqual(['new.txt']);
    await sleep(0);
    expect(before.rootDir.fd).toBe(-1); // the old descriptor is closed
  });

  it('a removed root a call still uses stays open for that call until it ends', async () => {
    let finish!: () => void;
    let during!: Workspace;
    const long = open.use(ws.root, async (workspace) => {
      during = workspace;
      await new Promise<void>((resolve) => (finish = resolve));
    });
    await sleep(0);
    await rm(ws.root, { recursive: true, force: true });
    await mkdir(ws.root);
    const next = await workspaceOf(open);
    await sleep(0);
    expect(next.rootDir).not.toBe(during.rootDir);
    expect(during.rootDir.fd).toBeGreaterThan(-1);
    finish();
    await long;
    await sleep(0);
    expect(during.rootDir.fd).toBe(-1);
  });

  it('a removed root that is not made again is made anew, empty, as a first call makes it', async () => {
    await workspaceOf(open);
    await rm(ws.root, { recursive: true, force: true });
    const listed = await open.use(ws.root, (workspace) => lsTool(workspace, {}));
    expect(listed).toMatchObject({ path: '.', entries: [] });
  });

  it('closes a root once no call has used it for its idle time, and not while a call uses it', async () => {
    let finish!: () => void;
    let during!: Workspace;
    const long = open.use(ws.root, async (workspace) => {
      during = workspace;
      await new Promise<void>((resolve) => (finish = resolve));
    });
    await sleep(150);
    expect(during.rootDir.fd).toBeGreaterThan(-1);
    finish();
    await long;
    await sleep(150);
    expect(during.rootDir.fd).toBe(-1);
    const next = await workspaceOf(open);
    expect(next.rootDir).not.toBe(during.rootDir);
  });

  it('holds at most its cap: a root past it is opened and closed by its own call', async () => {
    const other = path.join(ws.base, 'two');
    const third = path.join(ws.base, 'three');
    const a = await workspaceOf(open);
    const b = await workspaceOf(open, other);
    const c = await workspaceOf(open, third);
    await sleep(0);
    expect([a.rootDir.fd, b.rootDir.fd].every((fd) => fd > -1)).toBe(true);
    expect(c.rootDir.fd).toBe(-1);
    expect((await workspaceOf(open, third)).rootDir).not.toBe(c.rootDir);
  });

  it('sessions never share a root: each path has its own', async () => {
    const other = path.join(ws.base, 'outside');
    const mine = await workspaceOf(open);
    const theirs = await workspaceOf(open, other);
    expect(theirs.rootDir).not.toBe(mine.rootDir);
    expect(theirs.root).toBe(other);
  });

  it('a root that cannot be opened fails its call, and the next call tries its path again', async () => {
    const file = await ws.write('a-file', 'x');
    await expect(workspaceOf(open, file)).rejects.toMatchObject({ code: 'ENOTDIR' });
    await rm(file);
    await expect(workspaceOf(open, file)).resolves.toMatchObject({ root: file });
  });
});
