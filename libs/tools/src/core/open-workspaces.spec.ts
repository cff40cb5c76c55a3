import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { lsTool } from './ls';
import { OpenWorkspaces } from './open-workspaces';
import { createTestWorkspace, type TestWorkspace } from './test-support';
import type { Workspace } from './workspace-path';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `workspace`'s root descriptor gets closed within `withinMs` (a close is a trip through the pool). */
async function closedWithin(workspace: Workspace, withinMs = 2_000): Promise<boolean> {
  for (const started = Date.now(); Date.now() - started < withinMs; await sleep(5)) {
    if (workspace.rootDir.fd === -1) return true;
  }
  return false;
}

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

  /** A call that uses the root at `root` until `finish()`: its workspace once it has it, and its end. */
  const holding = async (roots: OpenWorkspaces, root = ws.root) => {
    let finish!: () => void;
    let given!: (workspace: Workspace) => void;
    const workspace = new Promise<Workspace>((resolve) => (given = resolve));
    const ended = roots.use(root, (opened) => {
      given(opened);
      return new Promise<void>((resolve) => (finish = resolve));
    });
    return { workspace: await workspace, finish: () => finish(), ended };
  };

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
    expect(await closedWithin(before)).toBe(true);
  });

  it('a removed root a call still uses stays open for that call until it ends', async () => {
    const call = await holding(open);
    await rm(ws.root, { recursive: true, force: true });
    await mkdir(ws.root);
    const next = await workspaceOf(open);
    expect(next.rootDir).not.toBe(call.workspace.rootDir);
    expect(await closedWithin(call.workspace, 100)).toBe(false);
    call.finish();
    await call.ended;
    expect(await closedWithin(call.workspace)).toBe(true);
  });

  it('calls at once into a removed root share one new root: the old one is closed, nothing is left open', async () => {
    const before = await workspaceOf(open);
    await rm(ws.root, { recursive: true, force: true });
    await mkdir(ws.root);
    const [a, b, c] = await Promise.all([workspaceOf(open), workspaceOf(open), workspaceOf(open)]);
    expect(b.rootDir).toBe(a.rootDir);
    expect(c.rootDir).toBe(a.rootDir);
    expect(await closedWithin(before)).toBe(true);
    expect(await closedWithin(a)).toBe(true); // by the sweep: no copy was left out of it
  });

  it('a removed root that is not made again is made anew, empty, as a first call makes it', async () => {
    await workspaceOf(open);
    await rm(ws.root, { recursive: true, force: true });
    const listed = await open.use(ws.root, (workspace) => lsTool(workspace, {}));
    expect(listed).toMatchObject({ path: '.', entries: [] });
  });

  it('closes a root once no call has used it for its idle time, and not while a call uses it', async () => {
    const call = await holding(open);
    expect(await closedWithin(call.workspace, 300)).toBe(false);
    call.finish();
    await call.ended;
    expect(await closedWithin(call.workspace)).toBe(true);
    const next = await workspaceOf(open);
    expect(next.rootDir).not.toBe(call.workspace.rootDir);
  });

  it('holds at most its cap: a new root takes the place of the one idle longest; with every one in use, a call opens and closes its own', async () => {
    const [two, three, four] = ['two', 'three', 'four'].map((name) => path.join(ws.base, name));
    const a = await workspaceOf(open);
    const b = await workspaceOf(open, two);
    const c = await workspaceOf(open, three);
    expect(await closedWithin(a)).toBe(true);
    const calls = [await holding(open, two), await holding(open, three)];
    expect(calls.map((call) => call.workspace.rootDir)).toEqual([b.rootDir, c.rootDir]);
    const past = await workspaceOf(open, four);
    expect(await closedWithin(past)).toBe(true);
    expect([b.rootDir.fd, c.rootDir.fd].every((fd) => fd > -1)).toBe(true);
    for (const call of calls) call.finish();
    await Promise.all(calls.map((call) => call.ended));
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
