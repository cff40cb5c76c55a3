import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Redis } from 'ioredis';
import type { SessionRef } from '@codemode/contracts';
import { EventLog, KeySpace } from '@codemode/events';
import { deleteKeys, testPrefix, testRedis } from '../../../../test/utils/redis-test-keys';
import { ProcessRegistry } from '../process-registry';
import { CONFIG, details, processesMatching, waitFor } from '../test-support';
import { removeSessionWorkspace, sessionWorkspace } from './session-workspace';
import { WorkspaceJanitor } from './workspace-janitor';

/** SPEC §10: a session's workspace goes once the session does (deleted or expired), and nothing outside it. */
const prefix = testPrefix('shell', 'workspace-janitor');
const keys = new KeySpace(prefix);
let redis: Redis;
let log: EventLog;
let root: string;
let outside: string;
let registry: ProcessRegistry;

beforeAll(async () => {
  redis = await testRedis('workspace-janitor');
  log = new EventLog(redis, keys);
});

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'janitor-root-'));
  outside = mkdtempSync(path.join(tmpdir(), 'janitor-outside-'));
  registry = new ProcessRegistry({ defaults: CONFIG, workspaceRoot: root, baseEnv: { PATH: '/usr/local/bin:/usr/bin:/bin' } });
});

afterEach(async () => {
  await registry.shutdown();
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

/** A session as Redis knows it: its session hash. */
const createSession = (ref: SessionRef) => redis.hset(keys.session(ref), 'createdAt', String(Date.now()));

function workspaceWith(ref: SessionRef, file = 'notes.txt'): string {
  const dir = sessionWorkspace(root, ref);
  mkdirSync(path.join(dir, 'sub'), { recursive: true });
  writeFileSync(path.join(dir, 'sub', file), 'kept?');
  return dir;
}

const janitor = (batchSize?: number) =>
  new WorkspaceJanitor({ root, existing: (refs) => log.existing(refs), busy: (w) => registry.runsIn(w), batchSize });

describe('WorkspaceJanitor', () => {
  it('keeps the workspace of a session that exists and removes the one of a session that is gone', async () => {
    const live: SessionRef = { tenant: 'acme', sessionId: 'live-1' };
    const gone: SessionRef = { tenant: 'acme', sessionId: 'gone-1' };
    await createSession(live);
    const liveDir = workspaceWith(live);
    const goneDir = workspaceWith(gone);

    expect(await janitor().sweep()).toEqual({ kept: 1, removed: 1 });

    expect(readFileSync(path.join(liveDir, 'sub', 'notes.txt'), 'utf8')).toBe('kept?');
    expect(existsSync(goneDir)).toBe(false);
    expect(existsSync(path.join(root, 'acme'))).toBe(true);
  });

  it('tells tenants apart: the same session id of another tenant is its own session', async () => {
    await createSession({ tenant: 'acme', sessionId: 'shared' });
    const acmeDir = workspaceWith({ tenant: 'acme', sessionId: 'shared' });
    const globexDir = workspaceWith({ tenant: 'globex', sessionId: 'shared' });

    expect(await janitor().sweep()).toEqual({ kept: 1, removed: 1 });

    expect(existsSync(acmeDir)).toBe(true);
    expect(existsSync(globexDir)).toBe(false);
  });

  it('removes a link inside a gone workspace without touching what it points to', async () => {
    const gone: SessionRef = { tenant: 'acme', sessionId: 'linker' };
    const dir = workspaceWith(gone);
    writeFileSync(path.join(outside, 'precious.txt'), 'still here');
    mkdirSync(path.join(outside, 'folder'));
    writeFileSync(path.join(outside, 'folder', 'inner.txt'), 'still here too');
    symlinkSync(outside, path.join(dir, 'to-outside'));
    symlinkSync(path.join(outside, 'precious.txt'), path.join(dir, 'sub', 'to-file'));

    expect(await janitor().sweep()).toEqual({ kept: 0, removed: 1 });

    expect(existsSync(dir)).toBe(false);
    expect(readFileSync(path.join(outside, 'precious.txt'), 'utf8')).toBe('still here');
    expect(readFileSync(path.join(outside, 'folder', 'inner.txt'), 'utf8')).toBe('still here too');
  });

  it('follows no link in place of a tenant or session folder', async () => {
    writeFileSync(path.join(outside, 'precious.txt'), 'still here');
    symlinkSync(outside, path.join(root, 'evil'));
    mkdirSync(path.join(root, 'acme'));
    symlinkSync(outside, path.join(root, 'acme', 'linked-session'));

    expect(await janitor().sweep()).toEqual({ kept: 0, removed: 0 });

    expect(readFileSync(path.join(outside, 'precious.txt'), 'utf8')).toBe('still here');
  });

  it('keeps a gone session’s workspace while a shell process runs in it, and removes it once that ends', async () => {
    const gone: SessionRef = { tenant: 'acme', sessionId: 'busy-1' };
    const dir = workspaceWith(gone);
    const started = await registry.exec('acme/busy-1', { command: 'sleep 4711', background: true }, CONFIG, { workspaceRoot: dir });
    expect(details(started).status).toBe('running');

    expect(await janitor().sweep()).toEqual({ kept: 1, removed: 0 });
    expect(existsSync(dir)).toBe(true);

    await registry.endIn(dir);
    await waitFor(() => processesMatching('sleep 4711').length === 0);
    expect(await janitor().sweep()).toEqual({ kept: 0, removed: 1 });
    expect(existsSync(dir)).toBe(false);
  });

  it('goes through many workspaces in bounded batches', async () => {
    const refs = Array.from({ length: 25 }, (_, i): SessionRef => ({ tenant: 'acme', sessionId: `many-${i}` }));
    for (const [i, ref] of refs.entries()) {
      workspaceWith(ref);
      if (i % 2 === 0) await createSession(ref);
    }

    expect(await janitor(4).sweep()).toEqual({ kept: 13, removed: 12 });
    expect(refs.filter((ref) => existsSync(sessionWorkspace(root, ref))).map((ref) => ref.sessionId)).toEqual(
      refs.filter((_, i) => i % 2 === 0).map((ref) => ref.sessionId),
    );
  });

  it('answers nothing removed for a root that does not exist yet', async () => {
    rmSync(root, { recursive: true, force: true });
    expect(await janitor().sweep()).toEqual({ kept: 0, removed: 0 });
  });
});

describe('removeSessionWorkspace', () => {
  it('removes only the session’s folder, and a missing one is no error', async () => {
    const ref: SessionRef = { tenant: 'acme', sessionId: 'del-1' };
    const other: SessionRef = { tenant: 'globex', sessionId: 'del-1' };
    workspaceWith(ref);
    const otherDir = workspaceWith(other);

    await removeSessionWorkspace(root, ref);
    await removeSessionWorkspace(root, ref);

    expect(existsSync(sessionWorkspace(root, ref))).toBe(false);
    expect(existsSync(otherDir)).toBe(true);
  });

  it('refuses ids that would name the root or a tenant folder', () => {
    expect(() => sessionWorkspace(root, { tenant: 'acme', sessionId: '..' })).toThrow('refusing workspace');
    expect(() => sessionWorkspace(root, { tenant: 'acme', sessionId: '.' })).toThrow('refusing workspace');
    expect(() => sessionWorkspace(root, { tenant: 'acme', sessionId: 'a/b' })).toThrow('refusing workspace');
    expect(() => sessionWorkspace(root, { tenant: '..', sessionId: 'x' })).toThrow('refusing workspace');
    expect(() => sessionWorkspace(root, { tenant: '.', sessionId: 'x' })).toThrow('refusing workspace');
    expect(sessionWorkspace(root, { tenant: 'acme', sessionId: 'a.b:c' })).toBe(path.join(root, 'acme', 'a.b:c'));
  });
});
