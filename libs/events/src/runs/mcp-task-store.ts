import { McpTaskRecordSchema, type CodeModeResult, type McpTaskRecord, type SessionRef } from '@codemode/contracts';
import type { KeySpace } from '../platform/keys';
import { guard, type RedisClient } from '../platform/redis';
import { ScriptLoader } from '../platform/script-loader';

/** A task as created: what it is, and how long its key lives while it is working (`liveMs`) and after its end (`ttlMs`). */
export interface NewMcpTask {
  taskId: string;
  kind: McpTaskRecord['kind'];
  runId: string;
  awaitResults: boolean;
  ttlMs: number;
  /** The longest the task's run can live: a working task never expires before its run ends. */
  liveMs: number;
  /** The call's answer when it is known at creation (a refused exec). */
  result?: CodeModeResult;
}

/**
 * SPEC §14 Tasks: the MCP tasks of a session, in the session's slot (`{tenant:sid}`, so Redis
 * Cluster keeps them with the session's runs). A task's key holds what the log cannot say: which
 * call of which run it is, and the call's answer once known — the first answer known stays the
 * call's (`settle` writes only where none is). Whether it is working is read from its run
 * (mcpTaskState); nothing of a task lives in a process, so any API replica answers for it. A task
 * lives `liveMs + ttlMs` while working, `ttlMs` from its end once settled; the session's index of
 * task ids drops ids whose task expired as it pages over them.
 */
export class McpTaskStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly scripts: ScriptLoader = ScriptLoader.default(),
  ) {}

  /** The next `n` of `<runId>:w<n>`: every task-augmented wait on the run counts, refused or not. */
  async nextWaitNumber(ref: SessionRef, runId: string, liveMs: number): Promise<number> {
    const key = this.keys.mcpTaskWaits(ref);
    const reply = await guard(() => this.redis.multi().hincrby(key, runId, 1).pexpire(key, liveMs).exec());
    return Number(reply?.[0]?.[1]);
  }

  /**
   * Records the task, once (create-mcp-task.lua): created again — an exec repeated with its
   * Idempotency-Key names the first run's task, at once or after it settled — it is kept as it is.
   */
  async create(ref: SessionRef, task: NewMcpTask, now = Date.now()): Promise<void> {
    const fields = ['kind', task.kind, 'runId', task.runId, 'awaitResults', task.awaitResults ? '1' : ''];
    fields.push('createdAt', String(now), 'ttlMs', String(task.ttlMs));
    if (task.result) fields.push('result', JSON.stringify(task.result), 'endedAt', String(now));
    const lifeMs = task.result ? task.ttlMs : task.liveMs + task.ttlMs;
    await guard(() =>
      this.scripts.run(
        this.redis,
        'create-mcp-task',
        [this.keys.mcpTask(ref, task.taskId), this.keys.mcpTasks(ref)],
        [task.taskId, now, lifeMs, task.liveMs + task.ttlMs, ...fields],
      ),
    );
  }

  async read(ref: SessionRef, taskId: string): Promise<McpTaskRecord | null> {
    const hash = await guard(() => this.redis.hgetall(this.keys.mcpTask(ref, taskId)));
    if (!hash.kind) return null;
    const parsed = McpTaskRecordSchema.safeParse({
      taskId,
      kind: hash.kind,
      runId: hash.runId,
      awaitResults: hash.awaitResults === '1',
      createdAt: Number(hash.createdAt),
      ttlMs: Number(hash.ttlMs),
      result: hash.result ? (JSON.parse(hash.result) as unknown) : null,
      endedAt: hash.endedAt ? Number(hash.endedAt) : null,
      cancelled: hash.cancelled === '1',
    });
    return parsed.success ? parsed.data : null;
  }

  /** The call's answer, unless one is already the task's (then false); the task then lives `ttlMs` from its end. */
  settle(ref: SessionRef, task: McpTaskRecord, result: CodeModeResult, now = Date.now()): Promise<boolean> {
    return this.end(ref, task, result, false, now);
  }

  /** `tasks/cancel`: the task is `cancelled` from now on, with the run's aborted answer as its result. */
  cancel(ref: SessionRef, task: McpTaskRecord, result: CodeModeResult, now = Date.now()): Promise<boolean> {
    return this.end(ref, task, result, true, now);
  }

  /** A page of the session's task ids, newest first, from `offset`; ids whose task expired are dropped from the index. */
  async page(ref: SessionRef, offset: number, size: number): Promise<{ tasks: McpTaskRecord[]; next: number | null }> {
    const index = this.keys.mcpTasks(ref);
    const ids = await guard(() => this.redis.zrevrange(index, offset, offset + size - 1));
    const records = await Promise.all(ids.map((id) => this.read(ref, id)));
    const gone = ids.filter((_, i) => records[i] === null);
    if (gone.length > 0) await guard(() => this.redis.zrem(index, ...gone));
    const tasks = records.filter((record): record is McpTaskRecord => record !== null);
    return { tasks, next: ids.length === size ? offset + size - gone.length : null };
  }

  private async end(ref: SessionRef, task: McpTaskRecord, result: CodeModeResult, cancelled: boolean, now: number): Promise<boolean> {
    const key = this.keys.mcpTask(ref, task.taskId);
    const multi = this.redis.multi().hsetnx(key, 'result', JSON.stringify(result)).hsetnx(key, 'endedAt', String(now));
    if (cancelled) multi.hset(key, 'cancelled', '1');
    const reply = await guard(() => multi.pexpire(key, task.ttlMs).exec());
    return reply?.[0]?.[1] === 1;
  }
}
