import { SessionRefSchema, type SessionRef } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import type { KeySpace } from '../platform/keys';
import { closeSubscriber, guard } from '../platform/redis';

/**
 * API side of `DELETE /v1/sessions/{sid}` (SPEC §10): once the session's keys are gone, tells every
 * worker to remove its workspace. Pub/sub reaches only the workers subscribed now; the workspace
 * janitor of each worker removes what a message missed.
 */
export async function publishWorkspaceRemoval(redis: RedisClient, keys: KeySpace, ref: SessionRef): Promise<void> {
  await guard(() => redis.publish(keys.workspaceRemovals(), JSON.stringify({ tenant: ref.tenant, sessionId: ref.sessionId })));
}

/** Worker side: hands each workspace-removal message on the deployment's channel to `onRemoval`. */
export class WorkspaceRemovals {
  readonly channel: string;
  private readonly onMessage = (channel: string, message: string) => this.dispatch(channel, message);

  /** @param subscriber a dedicated connection, owned (and closed) by this object */
  constructor(
    private readonly subscriber: RedisClient,
    keys: KeySpace,
    private readonly onRemoval: (ref: SessionRef) => void,
  ) {
    this.channel = keys.workspaceRemovals();
  }

  async start(): Promise<void> {
    this.subscriber.on('message', this.onMessage);
    // The offline queue sends SUBSCRIBE once connected; ioredis re-subscribes after every reconnect.
    await this.subscriber.subscribe(this.channel);
  }

  async close(): Promise<void> {
    await closeSubscriber(this.subscriber, this.onMessage);
  }

  private dispatch(channel: string, message: string): void {
    if (channel !== this.channel) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return; // a malformed message names no workspace
    }
    const ref = SessionRefSchema.safeParse(parsed);
    if (ref.success) this.onRemoval(ref.data);
  }
}
