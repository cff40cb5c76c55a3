import { Cluster } from 'ioredis';
import { closeSubscriber, type RedisClient } from '@codemode/events';
import { closeMessages } from '@codemode/fleet';

/** How long after a change of subscribers the hub subscribes again (changes come in bursts). */
const RESUBSCRIBE_AFTER_MS = 500;

/**
 * The inbox channels of the nodes whose connections this API instance holds (SPEC §15): one
 * sharded subscription per held node, on a connection of its own, each delivering to the one
 * connection that holds it. Invocations published while a node has no holder reach nobody (the
 * worker is told by the publish's receiver count).
 */
export class NodeHub {
  private readonly held = new Map<string, (message: string) => void>();
  private readonly onMessage = (channel: string, message: string) => this.held.get(channel)?.(message);
  private resubscribeTimer: NodeJS.Timeout | undefined;

  /** @param subscriber a dedicated connection, owned (and closed) by this object */
  constructor(private readonly subscriber: RedisClient) {
    subscriber.on('smessage', this.onMessage);
    // As RunReplies: a failed-over shard's new subscriber can be left unconnected until asked again.
    if (subscriber instanceof Cluster) subscriber.on('+subscriber', () => this.resubscribeSoon());
  }

  /**
   * Delivers the channel's messages to `deliver` until the returned release is called. A channel
   * held here already is taken from its holder, which is told it was superseded first.
   */
  async hold(channel: string, token: string, deliver: (message: string) => void): Promise<() => Promise<void>> {
    const before = this.held.get(channel);
    this.held.set(channel, deliver);
    before?.(closeMessages.superseded(token));
    await this.subscriber.ssubscribe(channel);
    return async () => {
      if (this.held.get(channel) !== deliver) return;
      this.held.delete(channel);
      await this.subscriber.sunsubscribe(channel);
    };
  }

  async close(): Promise<void> {
    clearTimeout(this.resubscribeTimer);
    this.held.clear();
    await closeSubscriber(this.subscriber, this.onMessage);
  }

  private resubscribeSoon(): void {
    clearTimeout(this.resubscribeTimer);
    this.resubscribeTimer = setTimeout(() => {
      for (const channel of this.held.keys()) void this.subscriber.ssubscribe(channel).catch(() => undefined);
    }, RESUBSCRIBE_AFTER_MS);
    this.resubscribeTimer.unref();
  }
}
