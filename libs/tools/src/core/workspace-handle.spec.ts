import { execFileSync } from 'node:child_process';
import { mkdir, rename, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { createTestWorkspace, type TestWorkspace } from './test-support';
import { WorkspaceHandle, type OpenOptions } from './workspace-handle';
import { openWorkspace, resolveWorkspacePath, type Workspace } from './workspace-path';

describe('WorkspaceHandle', () => {
  let ws: TestWorkspace;
  let workspace: Workspace;

  beforeEach(async () => {
    ws = await createTestWorkspace();
    await ws.write('a.txt', 'inside\n');
    await ws.write('dir/secret.txt', 'inside secret\n');
    workspace = await openWorkspace(ws.root);
  });
  afterEach(() => ws.cleanup());

  /** Opens what `relative` resolves to now, reads it and closes it. */
  async function readThrough(relative: string, options?: OpenOptions): Promise<string> {
    const target = await resolveWorkspacePath(workspace, relative);
    const handle = await WorkspaceHandle.open(workspace, target.absolute, relative, options);
    try {
      return (await handle.readBytes()).toString('utf8');
    } finally {
      await handle.close();
    }
  }

  /** Replaces `relative` with a symlink to `target`. */
  async function swapForSymlink(relative: string, target: string): Promise<void> {
    await rm(path.join(ws.root, relative), { recursive: true });
    await symlink(target, path.join(ws.root, relative));
  }

  // With /proc (Linux) and with the fallback used where it is absent.
  describe.each([
    ['/proc/self/fd', undefined],
    ['without /proc', { procFdDir: '/nonexistent/proc/self/fd' }],
  ])('%s', (_label, options: OpenOptions | undefined) => {
    const open = (absolute: string, shown: string) => WorkspaceHandle.open(workspace, absolute, shown, options);

    it('opens and reads files and symlinks that stay inside', async () => {
      await symlink('a.txt', path.join(ws.root, 'link-1'));
      await symlink('link-1', path.join(ws.root, 'link-2'));
      await expect(readThrough('link-2', options)).resolves.toBe('inside\n');
    });

    it('refuses a file swapped for a symlink to /etc/passwd after its path was resolved', async () => {
      const resolved = await resolveWorkspacePath(workspace, 'a.txt');
      await swapForSymlink('a.txt', '/etc/passwd');
      await expect(open(resolved.absolute, 'a.txt')).rejects.toThrow(new Error('path escapes the workspace: a.txt'));
    });

    it('refuses a directory on the path swapped for a symlink leading outside', async () => {
      const resolved = await resolveWorkspacePath(workspace, 'dir/secret.txt');
      await swapForSymlink('dir', ws.outside);
      await expect(open(resolved.absolute, 'dir/secret.txt')).rejects.toThrow(new Error('path escapes the workspace: dir/secret.txt'));
    });

    it('refuses a symlink chain that ends outside', async () => {
      await symlink(path.join(ws.outside, 'secret.txt'), path.join(ws.root, 'hop-2'));
      await symlink('hop-2', path.join(ws.root, 'hop-1'));
      await expect(open(path.join(ws.root, 'hop-1'), 'hop-1')).rejects.toThrow(new Error('path escapes the workspace: hop-1'));
    });
  });

  it('reads the file it opened even when its path is swapped afterwards', async () => {
    const handle = await WorkspaceHandle.open(workspace, path.join(workspace.root, 'a.txt'), 'a.txt');
    try {
      await swapForSymlink('a.txt', '/etc/passwd');
      await expect(handle.readBytes()).resolves.toEqual(Buffer.from('inside\n'));
    } finally {
      await handle.close();
    }
  });

  it('lists the directory it opened even when its path is swapped afterwards', async () => {
    const handle = await WorkspaceHandle.open(workspace, path.join(workspace.root, 'dir'), 'dir', { directory: true });
    try {
      await rename(path.join(ws.root, 'dir'), path.join(ws.root, 'moved'));
      await symlink(ws.outside, path.join(ws.root, 'dir'));
      expect((await handle.readEntries()).map((entry) => entry.name)).toEqual(['secret.txt']);
    } finally {
      await handle.close();
    }
  });

  it('never opens a directory through a symlink when walking, even one pointing inside', async () => {
    await mkdir(path.join(ws.root, 'real'));
    await symlink(path.join(ws.root, 'real'), path.join(ws.root, 'linked'));
    await expect(WorkspaceHandle.open(workspace, path.join(workspace.root, 'linked'), 'linked', { directory: true })).rejects.toThrow();
  });

  it('opens a FIFO without blocking, so a swapped-in pipe cannot hang a read', async () => {
    const fifo = path.join(ws.root, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const handle = await WorkspaceHandle.open(workspace, fifo, 'pipe');
    try {
      expect(handle.stats.isFIFO()).toBe(true);
    } finally {
      await handle.close();
    }
  });

  it('says not found when the path vanished before the open', async () => {
    await expect(WorkspaceHandle.open(workspace, path.join(workspace.root, 'gone.txt'), 'gone.txt')).rejects.toThrow(
      /^Path not found: gone\.txt\./u,
    );
  });
});
