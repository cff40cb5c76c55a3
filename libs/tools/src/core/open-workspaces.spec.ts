import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { lsTool } from './ls';
import { OpenWorkspaces } from './open-workspaces';
import { createTestWorkspace, type TestWorkspace } from './test-support';
import type { Workspace } from './workspace-path';

const IDLE_MS = 1_000;

/** One turn of the event loop (not faked: file operations finish between turns). */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Whether `workspace`'s root descriptor gets closed within `turns` turns of the loop (a close is a trip through the pool). */
async function closedWithin(workspace: Workspace, turns = 2_000): Promise<boolean> {
  for (let i = 0; i < turns; i += 1) {
    if (workspace.rootDir.fd === -1) return true;
    await turn();
  }
  return workspace.rootDir.fd === -1;
}

/**
 * The sweep's clock is faked: a root is closed for being idle only when a test moves the clock, so
 * a slow machine cannot close one under a test that expects it held.
 */
describe('OpenWorkspaces', () => {
  let ws: TestWorkspace;
  let open: OpenWorkspaces;
  const seen: Workspace[] = [];

  /** The workspace one call is given, kept to close after the test. */
  const workspaceOf = (root = ws.root): Promise<Workspace> =>
    open.use(root, (workspace) => {
      seen.push(workspace);
      return Promise.resolve(workspace);
    });

  /** A call that uses the root at `root` until `finish()`: its workspace once it has it, and its end. */
  const holding = async (root = ws.root) => {
    let finish!: () => void;
    let given!: (workspace: Workspace) => void;
    const workspace = new Promise<Workspace>((resolve) => (given = resolve));
    const ended = open.use(root, (opened) => {
      seen.push(opened);
      given(opened);
      return new Promise<void>((resolve) => (finish = resolve));
    });
    return { workspace: await workspace, finish: () => finish(), ended };
  };

  beforeEach(async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    ws = await createTestWorkspace();
    open = new OpenWorkspaces(IDLE_MS, 2);
  });
  afterEach(async () => {
    jest.advanceTimersByTime(3 * IDLE_MS); // the sweep closes what the test left idle
    for (const workspace of seen) await closedWithin(workspace);
    seen.length = 0;
    jest.useRealTimers();
    await ws.cleanup();
  });

  it('calls in a row share one open root (no open, stat or close between them)', async () => {
    const first = await workspaceOf();
    const second = await workspaceOf();
    expect(second.rootDir).toBe(first.rootDir);
    expect(second.rootDir.fd).toBeGreaterThan(-1);
  });

  it('each call gets the root as it is now: a directory that grew is not sized by its first stat', async () => {
    const first = await workspaceOf();
    await Promise.all(Array.from({ length: 300 }, (_, i) => ws.write(`a-file-with-a-long-name-${i}.txt`, '')));
    const second = await workspaceOf();
    expect(second.rootDir).toBe(first.rootDir);
    expect(second.rootStats.size).toBeGreaterThan(first.rootStats.size);
  });

  it('a root removed and made again (a session deleted, then made under the same id) is opened again: its files are listed, not the old folder', async () => {
    const before = await workspaceOf();
    await rm(ws.root, { recursive: true, force: true });
    await mkdir(ws.root);
    await ws.write('new.txt', 'made after\n');
    const listed = await open.use(ws.root, (workspace) => lsTool(workspace, {}));
    expect(listed.entries).toEqual(['new.txt']);
    expect(await closedWithin(before)).toBe(true);
  });

  it('a removed root a call still uses stays open for that call until it ends', async () => {
    const call = await holding();
    await rm(ws.root, { recursive: true, force: true });
    await mkdir(ws.root);
    const next = await workspaceOf();
    expect(next.rootDir).not.toBe(call.workspace.rootDir);
    expect(await closedWithin(call.workspace, 200)).toBe(false);
    call.finish();
    await call.ended;
    expect(await closedWithin(call.workspace)).toBe(true);
  });

  it('calls at once into a removed root share one new root: the old one is closed, nothing is left open', async () => {
    const before = await workspaceOf();
    await rm(ws.root, { recursive: true, force: true });
    await mkdir(ws.root);
    const [a, b, c] = await Promise.all([workspaceOf(), workspaceOf(), workspaceOf()]);
    expect(b.rootDir).toBe(a.rootDir);
    expect(c.rootDir).toBe(a.rootDir);
    expect(await closedWithin(before)).toBe(true);
    jest.advanceTimersByTime(3 * IDLE_MS);
    expect(await closedWithin(a)).toBe(true); // by the sweep: no copy was left out of it
  });

  it('a removed root that is not made again is made anew, empty, as a first call makes it', async () => {
    await workspaceOf();
    await rm(ws.root, { recursive: true, force: true });
    const listed = await open.use(ws.root, (workspace) => lsTool(workspace, {}));
    expect(listed).toMatchObject({ path: '.', entries: [] });
  });

  it('closes a root once no call has used it for its idle time, and not while a call uses it', async () => {
    const call = await holding();
    jest.advanceTimersByTime(10 * IDLE_MS);
    expect(await closedWithin(call.workspace, 200)).toBe(false);
    call.finish();
    await call.ended;
    jest.advanceTimersByTime(IDLE_MS / 2);
    expect(await closedWithin(call.workspace, 200)).toBe(false);
    jest.advanceTimersByTime(2 * IDLE_MS);
    expect(await closedWithin(call.workspace)).toBe(true);
    const next = await workspaceOf();
    expect(next.rootDir).not.toBe(call.workspace.rootDir);
  });

  it('holds at most its cap: a new root takes the place of the one idle longest; with every one in use, a call opens and closes its own', async () => {
    const [two, three, four] = ['two', 'three', 'four'].map((name) => path.join(ws.base, name));
    const a = await workspaceOf();
    jest.advanceTimersByTime(1); // `a` idle longer than `b`
    const b = await workspaceOf(two);
    const c = await workspaceOf(three);
    expect(await closedWithin(a)).toBe(true);
    const calls = [await holding(two), await holding(three)];
    expect(calls[0].workspace.rootDir).toBe(b.rootDir);
    expect(calls[1].workspace.rootDir).toBe(c.rootDir);
    const past = await workspaceOf(four);
    expect(await closedWithin(past)).toBe(true);
    expect([b.rootDir.fd, c.rootDir.fd].every((fd) => fd > -1)).toBe(true);
    for (const call of calls) call.finish();
    await Promise.all(calls.map((call) => call.ended));
  });

  it('sessions never share a root: each path has its own', async () => {
    const other = path.join(ws.base, 'outside');
    const mine = await workspaceOf();
    const theirs = await workspaceOf(other);
    expect(theirs.rootDir).not.toBe(mine.rootDir);
    expect(theirs.root).toBe(other);
  });

  it('a root that cannot be opened fails its call, and the next call tries its path again', async () => {
    const file = await ws.write('a-file', 'x');
    await expect(workspaceOf(file)).rejects.toMatchObject({ code: 'ENOTDIR' });
    await rm(file);
    await expect(workspaceOf(file)).resolves.toMatchObject({ root: file });
  });
});
