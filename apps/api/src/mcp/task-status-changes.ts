import type { Task } from '@modelcontextprotocol/sdk/types.js';

/**
 * SPEC §14 Tasks `notifications/tasks/status`: which of the session's newest tasks changed status
 * (or status message) since a notification stream last looked. What it remembers is only what it
 * already told its client: the tasks themselves are read from Redis each time, so a stream on any
 * replica tells of a change made on any other. The first look tells nothing (the client knows the
 * tasks it made); a task first seen later is told as it is.
 */
export class TaskStatusChanges {
  private told: Map<string, string> | null = null;

  constructor(private readonly newest: () => Promise<Task[]>) {}

  async next(): Promise<Task[]> {
    const tasks = await this.newest();
    const told = new Map(tasks.map((task) => [task.taskId, `${task.status}\n${task.statusMessage ?? ''}`]));
    const changed = this.told === null ? [] : tasks.filter((task) => this.told?.get(task.taskId) !== told.get(task.taskId));
    this.told = told;
    return changed;
  }
}
