import { randomUUID } from 'node:crypto';
import { nodeErrors, type NodeAnswer, type NodeInvocation, type NodeResultInput } from '@codemode/contracts';
import { guard, publishAnswer, type KeySpace, type RedisClient } from '@codemode/events';
import type { NodeRecord } from './node-registry';

/** What a worker waits on for answers: its own inbox channel (`RunReplies` with `perSlot: false`). */
export interface AnswerInbox {
  readonly onlyChannel: string;
  waitForAnswer(requestId: string, signal: AbortSignal): Promise<unknown>;
}

/** How long an invocation's record outlives its timeout, so a late answer is told it is late, not unknown. */
const CALL_RECORD_GRACE_MS = 5_000;
/**
 * How much longer than the node is told a worker waits: a node that enforces the timeout (the
 * reference node kills the command) answers with what happened, which says more than silence.
 */
const ANSWER_GRACE_MS = 1_000;

/** Why an invocation did not get an answer. */
export class NodeCallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NodeCallError';
  }
}

/**
 * Invocations of paired nodes across the fleet (SPEC §15). A worker records the invocation (which
 * node it is for, where the answer goes), publishes it on the node's inbox channel, which only the
 * API holding the node's connection subscribes to, and waits on its own answer channel. The node
 * posts its answer to any API, which takes the record (once: a second answer finds none) and
 * publishes the answer to the worker. No API needs to know which worker asked, nor a worker which
 * API holds the node.
 */
export class NodeCalls {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
  ) {}

  /**
   * Worker: the node's answer to `command`, within `timeoutMs`.
   * @throws NodeCallError when the node is not connected, does not answer in time, or answers an error
   */
  async invoke(
    tenant: string,
    node: NodeRecord,
    command: string,
    params: unknown,
    opts: { timeoutMs: number; signal: AbortSignal; inbox: AnswerInbox },
  ): Promise<unknown> {
    const invocationId = randomUUID();
    const callKey = this.keys.nodeCall(tenant, invocationId);
    const timeout = AbortSignal.timeout(opts.timeoutMs + ANSWER_GRACE_MS);
    const signal = AbortSignal.any([opts.signal, timeout]);
    const answered = opts.inbox.waitForAnswer(invocationId, signal);
    // Settled below either way; never an unhandled rejection if the publish fails first.
    answered.catch(() => undefined);
    try {
      await guard(() =>
        this.redis.set(
          callKey,
          JSON.stringify({ nodeId: node.id, replyTo: opts.inbox.onlyChannel }),
          'PX',
          opts.timeoutMs + ANSWER_GRACE_MS + CALL_RECORD_GRACE_MS,
        ),
      );
      const invocation: NodeInvocation = { invocationId, command, params: params ?? {}, timeoutMs: opts.timeoutMs };
      const receivers = await guard(() => this.redis.spublish(this.keys.nodeInbox(tenant, node.id), JSON.stringify(invocation)));
      if (receivers === 0) throw new NodeCallError(nodeErrors.notConnected(node.name));
      let answer: NodeAnswer;
      try {
        answer = (await answered) as NodeAnswer;
      } catch (error) {
        if (timeout.aborted && !opts.signal.aborted) throw new NodeCallError(nodeErrors.timedOut(node.name, command, opts.timeoutMs));
        throw error;
      }
      if (!answer.ok) throw new NodeCallError(answer.error);
      return answer.value;
    } finally {
      await guard(() => this.redis.del(callKey)).catch(() => undefined);
    }
  }

  /**
   * API: a node's answer. @returns false when no invocation of this node waits for it (unknown,
   * answered already, timed out, or another node's)
   */
  async answer(tenant: string, nodeId: string, result: NodeResultInput): Promise<boolean> {
    const raw = await guard(() => this.redis.getdel(this.keys.nodeCall(tenant, result.invocationId)));
    if (raw === null) return false;
    const call = JSON.parse(raw) as { nodeId?: string; replyTo?: string };
    if (call.nodeId !== nodeId || typeof call.replyTo !== 'string') return false;
    const answer: NodeAnswer = result.ok
      ? { ok: true, value: result.value ?? null }
      : { ok: false, error: result.error ?? `node command failed without a message.` };
    await guard(() => publishAnswer(this.redis, call.replyTo!, result.invocationId, answer));
    return true;
  }
}
