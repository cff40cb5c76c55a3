import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { createRedis, KeySpace, RunReplies } from '@codemode/events';
import { NodeCalls, NodeRegistry } from '@codemode/fleet';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { NodeSurface } from './node-surface';

/**
 * The worker's inbox for node answers: one channel of its own, subscribed on the first node call
 * (a worker whose cells never call a node holds no subscriber connection for it).
 */
class NodeAnswerInbox {
  private inbox: Promise<RunReplies> | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly keys: KeySpace,
    private readonly logger: Logger,
  ) {}

  open(): Promise<RunReplies> {
    this.inbox ??= (async () => {
      const subscriber = createRedis(this.config.redis, {
        name: `worker-${this.config.workerId}-nodes`,
        subscriber: true,
        onError: (error) => this.logger.warn({ err: error.message }, 'Redis connection error; retrying'),
      });
      const replies = new RunReplies(subscriber, this.keys, `node-answers:${this.config.workerId}`, { perSlot: false });
      await replies.start();
      return replies;
    })();
    return this.inbox;
  }

  async close(): Promise<void> {
    const inbox = this.inbox;
    this.inbox = undefined;
    await (await inbox)?.close();
  }
}

@Module({
  providers: [
    {
      provide: NodeAnswerInbox,
      inject: [APP_CONFIG, KeySpace, LOGGER],
      useFactory: (c: AppConfig, k: KeySpace, l: Logger) => new NodeAnswerInbox(c, k, l),
    },
    {
      provide: NodeSurface,
      inject: [NodeRegistry, NodeCalls, NodeAnswerInbox],
      useFactory: (registry: NodeRegistry, calls: NodeCalls, inbox: NodeAnswerInbox) =>
        new NodeSurface(registry, calls, () => inbox.open()),
    },
  ],
  exports: [NodeSurface],
})
export class NodesModule implements OnApplicationShutdown {
  constructor(@Inject(NodeAnswerInbox) private readonly inbox: NodeAnswerInbox) {}

  async onApplicationShutdown(): Promise<void> {
    await this.inbox.close().catch(() => undefined);
  }
}
