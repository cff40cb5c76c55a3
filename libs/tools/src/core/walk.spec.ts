import { rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { createTestWorkspace, type TestWorkspace } from './test-support';
import { walkWorkspace } from './walk';
import { WorkspaceEntry } from './workspace-entry';
import { closeWorkspace, openWorkspace, type Workspace } from './workspace-path';

describe('walkWorkspace', () => {
  let ws: TestWorkspace;
  let workspace: Workspace;

  beforeEach(async () => {
    ws = await createTestWorkspace();
    await ws.write('a.txt', 'a\n');
    await ws.write('sub/b.txt', 'b\n');
    workspace = await openWorkspace(ws.root);
  });
  afterEach(async () => {
    await closeWorkspace(workspace);
    await ws.cleanup();
  });

  const walk = async (onVisit: (relative: string) => Promise<void> = async () => undefined) => {
    const seen: string[] = [];
    await walkWorkspace(
      workspace,
      WorkspaceEntry.root(workspace),
      async (entry) => {
        seen.push(entry.relative);
        await onVisit(entry.relative);
        return true;
      },
      { toolName: 'find' },
    );
    return seen;
  };

  it("visits a directory's entries in name order, then its subdirectories", async () => {
    await expect(walk()).resolves.toEqual(['a.txt', 'sub', 'sub/b.txt']);
  });

  it('does not descend a directory swapped for a symlink leading outside after it was listed', async () => {
    const seen = await walk(async (relative) => {
      if (relative === 'sub') {
        await rm(path.join(ws.root, 'sub'), { recursive: true });
        await symlink(ws.outside, path.join(ws.root, 'sub'));
      }
    });
    expect(seen).toEqual(['a.txt', 'sub']);
  });

  it('does not descend symlinked directories, inside or outside, nor list links leaving the workspace', async () => {
    await symlink(path.join(ws.root, 'sub'), path.join(ws.root, 'sub-link'));
    await symlink(ws.outside, path.join(ws.root, 'outside-link'));
    await symlink('/etc/passwd', path.join(ws.root, 'passwd-link'));
    await expect(walk()).resolves.toEqual(['a.txt', 'sub', 'sub-link', 'sub/b.txt']);
  });
});
