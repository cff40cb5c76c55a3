import { existsSync, rmSync } from 'node:fs';
import { answerFromHistory } from './answer-from-history';
import { rebuildSessions } from './history';
import type { ProcessRegistry } from './process-registry';
import { CONFIG, details, makeRegistry, pollUntilExit, processesMatching, waitFor } from './test-support';
import { texts } from './texts';

/**
 * A registry that calls `act` once, from its check of a new session id: right before its first
 * spawn, after the start's last check. `acted` settles when what `act` returned does.
 */
function registryActingBeforeSpawn(act: (registry: ProcessRegistry, workspaceRoot: string) => Promise<void>) {
  let actNow: (() => void) | undefined;
  const acted = new Promise<void>((resolve) => (actNow = () => resolve(act(made.registry, made.workspaceRoot))));
  const made = makeRegistry({
    isIdTaken: () => {
      actNow?.();
      actNow = undefined;
      return false;
    },
  });
  return { ...made, acted };
}

describe('process lifecycle', () => {
  it('gives pty:true commands a terminal and interrupts them with send-keys C-c', async () => {
    const { registry } = makeRegistry();
    const tty = await registry.exec('p', { command: 'tty', pty: true }, CONFIG);
    expect(tty.text).toMatch(/^\/dev\/pts\/\d+$/);
    const plain = await registry.exec('p', { command: 'tty' }, CONFIG);
    expect(plain.text).toContain('not a tty');

    const id = details(await registry.exec('p', { command: 'sleep 29', pty: true, background: true }, CONFIG)).sessionId;
    // C-c reaches the terminal's foreground process: the command itself once it runs (a fixed 100 ms
    // was not enough on a loaded machine, where the key reached the terminal before the command).
    await waitFor(() => processesMatching('sleep 29').length > 0);
    expect((await registry.process('p', { action: 'send-keys', sessionId: id, keys: ['C-c'] }, CONFIG)).text).toBe(
      `Sent 1 bytes to session ${id}.`,
    );
    const { answer } = await pollUntilExit(registry, 'p', id, 3000);
    expect(answer.text).toMatch(/Process exited with code 130\.$/);
    await registry.shutdown();
  });

  it('kills the whole process group on timeout', async () => {
    const { registry } = makeRegistry();
    const answer = await registry.exec('t', { command: "sh -c 'sleep 101 & sleep 101'", timeoutSeconds: 1 }, CONFIG);
    expect(details(answer)).toMatchObject({ status: 'failed', timedOut: true });
    expect(answer.text).toContain('Command timed out after 1 seconds');
    await waitFor(() => processesMatching('sleep 101').length === 0, 2000);
    await registry.shutdown();
  });

  it('shutdown ends every process, including pty children and stragglers', async () => {
    const { registry, events } = makeRegistry();
    // Durations no other test uses: the process table is the machine's, and other suites run
    // commands like `sleep 100.4242` meanwhile.
    await registry.exec('x', { command: 'sleep 4102 & sleep 4102', background: true }, CONFIG);
    await registry.exec('x', { command: "trap '' TERM; sleep 4103", background: true }, CONFIG);
    await registry.exec('x', { command: 'sleep 4104', pty: true, background: true }, CONFIG);
    // Exits at once, leaving its background child in the group.
    await registry.exec('x', { command: 'sleep 4105 & echo left', yieldMs: 1000 }, CONFIG);
    await waitFor(() => processesMatching('sleep 410').length >= 5);
    await registry.shutdown();
    await waitFor(() => processesMatching('sleep 410').length === 0, 3000);
    expect(events.filter((e) => e.type === 'shell.exited')).toHaveLength(4);
    expect((await registry.exec('x', { command: 'true' }, CONFIG)).text).toContain('shutting down');
  });

  it('a command still starting when its workspace is ended (a session DELETE) does not run, and the end waits for it', async () => {
    const { registry, workspaceRoot } = makeRegistry();
    // Not awaited: endIn runs while the start is in its awaits (the cwd).
    const starting = registry.exec('x', { command: 'sleep 4111', background: true }, CONFIG);
    await registry.endIn(workspaceRoot);
    // What the caller does next (the worker removes the folder): the start has settled by now and re-creates nothing.
    rmSync(workspaceRoot, { recursive: true, force: true });
    const answer = await starting;
    expect(answer.text).toBe(texts.sessionDeletedBeforeRun);
    expect(details(answer).status).toBe('failed');
    expect(existsSync(workspaceRoot)).toBe(false);
    expect(processesMatching('sleep 4111')).toEqual([]);
    await registry.shutdown();
  });

  it('a command still starting counts as running in its workspace (the sweep keeps the folder)', async () => {
    const { registry, workspaceRoot } = makeRegistry();
    const starting = registry.exec('x', { command: 'true' }, CONFIG);
    expect(registry.runsIn(workspaceRoot)).toBe(true);
    expect(details(await starting).status).toBe('completed');
    expect(registry.runsIn(workspaceRoot)).toBe(false);
    await registry.shutdown();
    rmSync(workspaceRoot, { recursive: true, force: true });
  });

  it('an end does not wait for a start still in its read-only size check, which then does not run', async () => {
    const { registry, workspaceRoot } = makeRegistry({ workspaceMaxBytes: 1 << 30 });
    const starting = registry.exec('x', { command: 'sleep 4114', background: true }, CONFIG);
    let settled = false;
    void starting.then(() => (settled = true));
    await registry.endIn(workspaceRoot);
    // The size walk runs on a thread: the end returned before it answered.
    expect(settled).toBe(false);
    expect((await starting).text).toBe(texts.sessionDeletedBeforeRun);
    expect(processesMatching('sleep 4114')).toEqual([]);
    await registry.shutdown();
    rmSync(workspaceRoot, { recursive: true, force: true });
  });

  it('a command whose workspace is ended during its spawn is stopped once spawned, before the end returns', async () => {
    const { registry, workspaceRoot, events, acted } = registryActingBeforeSpawn((r, workspace) => r.endIn(workspace));
    const starting = registry.exec('x', { command: 'sleep 4112', background: true }, CONFIG);
    await acted;
    // Its exit is the answer's, not a background session's (no notice, no slot kept for it).
    expect(events.filter((e) => e.type === 'shell.exited').map((e) => e.data)).toEqual([expect.objectContaining({ backgrounded: false })]);
    expect(processesMatching('sleep 4112')).toEqual([]);
    const answer = await starting;
    expect(details(answer).status).toBe('failed');
    expect(answer.text).toContain(texts.sessionDeletedWhileStarting);
    await registry.shutdown();
    rmSync(workspaceRoot, { recursive: true, force: true });
  });

  it('shutdown during a spawn waits for the command, which is stopped once spawned', async () => {
    const { registry, events, workspaceRoot, acted } = registryActingBeforeSpawn((r) => r.shutdown());
    const starting = registry.exec('x', { command: 'sleep 4113', background: true }, CONFIG);
    await acted;
    // Checked as soon as shutdown returned: it did not return before the command it let start ended.
    expect(events.filter((e) => e.type === 'shell.exited')).toHaveLength(1);
    expect(processesMatching('sleep 4113')).toEqual([]);
    expect((await starting).text).toContain(texts.shuttingDown);
    rmSync(workspaceRoot, { recursive: true, force: true });
  });

  it('forgets finished sessions after cleanupMs and keeps at most 50', async () => {
    let offset = 0;
    const { registry } = makeRegistry({ now: () => Date.now() + offset });
    const config = { ...CONFIG, cleanupMs: 60_000 };
    const ids: string[] = [];
    for (let i = 0; i < 52; i += 1) ids.push(details(await registry.exec('r', { command: 'true', background: true }, config)).sessionId);
    await waitFor(async () =>
      details(await registry.process('r', { action: 'list' }, config)).sessions.every((s) => s.status !== 'running'),
    );
    const listed = details(await registry.process('r', { action: 'list' }, config)).sessions.map((s) => s.sessionId);
    expect(listed).toHaveLength(50);
    offset = 60_001;
    expect((await registry.process('r', { action: 'list' }, config)).text).toBe('No running or recent sessions.');
    await registry.shutdown();
  });

  it('rebuilds list, poll and log from recorded events, with lost sessions', async () => {
    const { registry, events } = makeRegistry();
    const done = details(await registry.exec('h', { command: 'echo kept', background: true }, CONFIG)).sessionId;
    await pollUntilExit(registry, 'h', done);
    await registry.exec('h', { command: 'echo foreground' }, CONFIG);
    const lostId = details(await registry.exec('h', { command: 'echo partial; sleep 30', background: true }, CONFIG)).sessionId;
    await waitFor(() => events.some((e) => e.type === 'shell.output' && e.data.sessionId === lostId), 2000);
    // The worker dies while `lostId` runs: only its started/output events were recorded.
    const recorded = events.filter((e) => !(e.type === 'shell.exited' && e.data.sessionId === lostId));
    await registry.shutdown();

    const sessions = rebuildSessions(recorded, { isOwnerAlive: () => false });
    const list = await answerFromHistory('h', { action: 'list' }, sessions, CONFIG);
    expect(details(list).sessions.map((s) => [s.sessionId, s.status])).toEqual([
      [lostId, 'lost'],
      [done, 'completed'],
    ]);
    const log = await answerFromHistory('h', { action: 'log', sessionId: lostId }, sessions, CONFIG);
    expect(log.text).toBe('partial');
    expect(details(log).status).toBe('lost');
    expect((await answerFromHistory('h', { action: 'poll', sessionId: done }, sessions, CONFIG)).text).toBe(
      'kept\n\nProcess exited with code 0.',
    );
    expect((await answerFromHistory('h', { action: 'write', sessionId: lostId }, sessions, CONFIG)).text).toBe(
      `No active session found for ${lostId}`,
    );
    expect((await answerFromHistory('other', { action: 'list' }, sessions, CONFIG)).text).toBe('No running or recent sessions.');
  });
});
