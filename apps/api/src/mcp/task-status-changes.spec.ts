import type { Task } from '@modelcontextprotocol/sdk/types.js';
import { TaskStatusChanges } from './task-status-changes';

const task = (taskId: string, status: Task['status'], statusMessage?: string): Task => ({
  taskId,
  status,
  ttl: 60_000,
  createdAt: '2026-01-01T00:00:00.000Z',
  lastUpdatedAt: '2026-01-01T00:00:00.000Z',
  pollInterval: 1000,
  ...(statusMessage ? { statusMessage } : {}),
});

describe('TaskStatusChanges (notifications/tasks/status)', () => {
  it('tells nothing at first, then each change of status or message once, and tasks first seen later', async () => {
    let tasks: Task[] = [task('a', 'working'), task('b', 'completed')];
    const changes = new TaskStatusChanges(() => Promise.resolve(tasks));
    expect(await changes.next()).toEqual([]);
    expect(await changes.next()).toEqual([]);
    tasks = [task('c', 'working'), task('a', 'working', 'waiting for the platform: agents.run'), task('b', 'completed')];
    expect((await changes.next()).map((t) => [t.taskId, t.status, t.statusMessage])).toEqual([
      ['c', 'working', undefined],
      ['a', 'working', 'waiting for the platform: agents.run'],
    ]);
    tasks = [task('c', 'working'), task('a', 'completed'), task('b', 'completed')];
    expect((await changes.next()).map((t) => [t.taskId, t.status])).toEqual([['a', 'completed']]);
    expect(await changes.next()).toEqual([]);
  });
});
