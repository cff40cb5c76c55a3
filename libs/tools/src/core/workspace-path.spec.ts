import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { WorkspacePathEscapeError, WorkspacePathNotFoundError } from '../errors';
import { createTestWorkspace, type TestWorkspace } from './test-support';
import { openWorkspace, resolveWorkspacePath, type Workspace } from './workspace-path';

describe('resolveWorkspacePath', () => {
  let ws: TestWorkspace;
  let workspace: Workspace;

  beforeEach(async () => {
    ws = await createTestWorkspace();
    await ws.write('src/a.txt', 'a\n');
    workspace = await openWorkspace(ws.root);
  });
  afterEach(() => ws.cleanup());

  it('resolves relative and in-workspace absolute paths to workspace-relative ones', async () => {
    await expect(resolveWorkspacePath(workspace, 'src/a.txt')).resolves.toMatchObject({ relative: 'src/a.txt' });
    await expect(resolveWorkspacePath(workspace, './src/../src/a.txt')).resolves.toMatchObject({ relative: 'src/a.txt' });
    await expect(resolveWorkspacePath(workspace, path.join(ws.root, 'src/a.txt'))).resolves.toMatchObject({ relative: 'src/a.txt' });
    await expect(resolveWorkspacePath(workspace, '')).resolves.toMatchObject({ relative: '.' });
  });

  it('reads /workspace/... as the sandbox shows the workspace, and refuses leaving it from there', async () => {
    await expect(resolveWorkspacePath(workspace, '/workspace/src/a.txt')).resolves.toMatchObject({ relative: 'src/a.txt' });
    await expect(resolveWorkspacePath(workspace, '/workspace')).resolves.toMatchObject({ relative: '.' });
    await expect(resolveWorkspacePath(workspace, '/workspace/../etc/passwd')).rejects.toThrow(
      new Error('path escapes the workspace: /workspace/../etc/passwd'),
    );
    await expect(resolveWorkspacePath(workspace, '/workspaces/x')).rejects.toBeInstanceOf(WorkspacePathEscapeError);
  });

  it('refuses .. segments, absolute paths outside and symlinks leaving the workspace', async () => {
    await expect(resolveWorkspacePath(workspace, '../outside/secret.txt')).rejects.toThrow(
      new WorkspacePathEscapeError('../outside/secret.txt'),
    );
    await expect(resolveWorkspacePath(workspace, '/etc/passwd')).rejects.toBeInstanceOf(WorkspacePathEscapeError);
    await symlink(ws.outside, path.join(ws.root, 'link'));
    await expect(resolveWorkspacePath(workspace, 'link/secret.txt')).rejects.toThrow(
      new Error('path escapes the workspace: link/secret.txt'),
    );
    // A missing file below the escaping link is still an escape, not "not found".
    await expect(resolveWorkspacePath(workspace, 'link/missing.txt')).rejects.toBeInstanceOf(WorkspacePathEscapeError);
  });

  it('refuses a sibling directory sharing the root as a name prefix', async () => {
    await mkdir(`${ws.root}-evil`);
    await expect(resolveWorkspacePath(workspace, `${ws.root}-evil`)).rejects.toBeInstanceOf(WorkspacePathEscapeError);
  });

  it('says not found for missing paths inside, without the host path', async () => {
    const error = await resolveWorkspacePath(workspace, 'nope.txt').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkspacePathNotFoundError);
    expect((error as Error).message).toBe('Path not found: nope.txt. Use ls or find to see what exists in the workspace.');
  });

  it('creates a missing workspace root', async () => {
    const fresh = await openWorkspace(path.join(ws.base, 'new', 'ws'));
    await expect(resolveWorkspacePath(fresh, '.')).resolves.toMatchObject({ relative: '.' });
  });
});
