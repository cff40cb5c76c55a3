import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import type { RedisClient } from '@codemode/events';
import { SandboxPool } from '@codemode/sandbox';
import { CellStreamReaders } from '../cells/cell-stream-readers';
import { CellsProcessor } from '../cells/cells.processor';
import { REDIS } from '../core/tokens';
import { PresenceHeartbeat } from '../lifecycle/presence-heartbeat.service';
import { OwnQueueProcessor } from '../own-queue/own-queue.processor';
import { ShellConfinement } from '../shell/shell-confinement.service';
import { McpDeployment } from '../tools/mcp-deployment.service';

/**
 * The worker's own health, on WORKER_METRICS_PORT. Ready = Redis answers, sandbox warm, consuming,
 * holding its lease (so it is in the worker registry, and a queue routed to it is removed once it
 * is gone), shell confinement works where required. MCP servers do not decide readiness (a lost server is
 * retried while cells that do not use it run on); the ready body reports each one's state.
 */
@Controller('health')
export class HealthController {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly pool: SandboxPool,
    private readonly cells: CellsProcessor,
    private readonly streamCells: CellStreamReaders,
    private readonly ownQueue: OwnQueueProcessor,
    private readonly confinement: ShellConfinement,
    private readonly mcp: McpDeployment,
    private readonly heartbeat: PresenceHeartbeat,
  ) {}

  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(): Promise<{ status: 'ok'; sandbox: ReturnType<SandboxPool['stats']>; mcp: ReturnType<McpDeployment['statuses']> }> {
    // SPEC §10: a worker that must confine shell commands and cannot is not ready. Said first: it
    // never passes by waiting, unlike the checks below (a lease is held within a beat of start).
    const unready = this.confinement.unreadyReason();
    if (unready) throw new ServiceUnavailableException({ error: unready, code: 'runtime_unavailable' });
    const redisOk = await this.redis.ping().then(
      () => true,
      () => false,
    );
    if (!redisOk || !this.cells.running || !this.streamCells.running || !this.ownQueue.running) {
      throw new ServiceUnavailableException({
        error: redisOk ? 'not consuming cells yet.' : 'Redis does not answer; not ready.',
        code: 'runtime_unavailable',
      });
    }
    if (!this.heartbeat.holdsLease) {
      throw new ServiceUnavailableException({
        error: 'no worker lease yet; nothing is routed here until it holds one.',
        code: 'runtime_unavailable',
      });
    }
    return { status: 'ok', sandbox: this.pool.stats(), mcp: this.mcp.statuses() };
  }
}
