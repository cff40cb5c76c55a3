import { Injectable, OnModuleInit } from '@nestjs/common';
import { ApiMetrics } from '@codemode/telemetry';
import { CellDispatch } from '../queues/cell-dispatch';
import { ShellQueue } from '../queues/shell-queue';

/**
 * `codemode_queue_*` read from Redis on each scrape rather than on a timer: every API replica
 * reports the same shared queues, and an idle replica does no queue reads between scrapes.
 */
@Injectable()
export class QueueGauges implements OnModuleInit {
  constructor(
    private readonly metrics: ApiMetrics,
    private readonly cells: CellDispatch,
    private readonly shell: ShellQueue,
  ) {}

  onModuleInit(): void {
    this.metrics.addCollector(() => this.refresh());
  }

  async refresh(): Promise<void> {
    const [cells, shell] = await Promise.all([this.cells.stats(), this.shell.stats()]);
    this.metrics.setQueue('cells', cells.counts, cells.oldestWaitingAt);
    this.metrics.setQueue('shell', shell.counts, shell.oldestWaitingAt);
  }
}
