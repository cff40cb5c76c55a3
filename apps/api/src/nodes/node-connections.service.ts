import { HttpStatus, Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { KeyRole } from '@codemode/config';
import { NodeConnectInputSchema, NodeResultInputSchema, type NodeView } from '@codemode/contracts';
import { NODE_BEAT_MS, readCloseMessage, NodeCalls, NodeRegistry, nodeView, type NodeHold, type PairingRefusal } from '@codemode/fleet';
import type { Logger } from '@codemode/telemetry';
import { ConflictApiException, ForbiddenApiException, InvalidInputException, NotFoundApiException } from '../http/api-errors';
import { untilClosed } from '../http/connection-close';
import { LOGGER } from '../core/tokens';
import { TenantLimits } from '../quotas/tenant-limits.service';
import { NodeHub } from './node-hub';

/** What a connection may hold unread before the node counts as gone (it is not reading its stream). */
const MAX_UNREAD_BYTES = 4 * 1024 * 1024;

/**
 * A node's long-lived connection (SPEC §15): `POST /v1/nodes/connect` pairs the node (or takes
 * its record back) and answers with an event stream that carries its invocations. The connection
 * holds one of the tenant's stream slots, beats the node's lease while open, and ends when the
 * node goes, another connection takes the node, the node is removed, or the node stops reading.
 * Answers come back by `POST /v1/nodes/{id}/results` to any API instance.
 */
@Injectable()
export class NodeConnections implements OnApplicationShutdown {
  constructor(
    private readonly registry: NodeRegistry,
    private readonly calls: NodeCalls,
    private readonly hub: NodeHub,
    private readonly limits: TenantLimits,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async list(tenant: string): Promise<{ nodes: NodeView[] }> {
    return { nodes: (await this.registry.list(tenant)).map(nodeView) };
  }

  async remove(tenant: string, nodeId: string): Promise<{ id: string; deleted: true }> {
    if (!(await this.registry.remove(tenant, nodeId))) throw new NotFoundApiException(`node ${nodeId} not found.`);
    return { id: nodeId, deleted: true };
  }

  async answer(tenant: string, nodeId: string, body: Record<string, unknown>): Promise<{ accepted: true }> {
    const parsed = NodeResultInputSchema.safeParse(body);
    if (!parsed.success) throw invalid(parsed.error.issues[0]);
    if (!(await this.calls.answer(tenant, nodeId, parsed.data))) {
      throw new ConflictApiException(
        `invocation ${parsed.data.invocationId} of node ${nodeId} is not waiting for an answer (unknown, answered or timed out).`,
      );
    }
    return { accepted: true };
  }

  /**
   * Serves the connection until it ends; refusals before the stream starts are HTTP errors.
   * `closed` is watched from the request's first byte: a client gone before the pairing is not
   * paired, one gone during it is dropped at once, and the slot is given back either way.
   */
  async connect(tenant: string, role: KeyRole, body: Record<string, unknown>, res: ServerResponse, closed: AbortSignal): Promise<void> {
    const parsed = NodeConnectInputSchema.safeParse(body);
    if (!parsed.success) throw invalid(parsed.error.issues[0]);
    const input = parsed.data;
    const slot = await this.limits.stream(tenant);
    try {
      if (closed.aborted) return;
      const paired = await this.registry.connect(tenant, input, role);
      if ('kind' in paired) throw pairingRefused(paired, input.name);
      await this.serve(tenant, paired, res, closed);
    } finally {
      await slot.release().catch(() => undefined);
    }
  }

  private async serve(tenant: string, hold: NodeHold, res: ServerResponse, closed: AbortSignal): Promise<void> {
    const inbox = this.registry.inboxOf(tenant, hold.nodeId);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      res.end();
    };
    const deliver = (message: string) => {
      if (ended) return;
      const close = readCloseMessage(message);
      if (close?.close === 'superseded' && close.by !== hold.token) return end();
      if (close?.close === 'removed') {
        // The node stops rather than pairing anew (SPEC §15 DELETE /v1/nodes/{id}).
        res.write('event: removed\ndata: {}\n\n');
        return end();
      }
      if (close) return;
      if (res.writableLength > MAX_UNREAD_BYTES) {
        this.logger.info({ tenant, nodeId: hold.nodeId }, 'node connection not reading its invocations; closed');
        res.destroy();
        return;
      }
      res.write(`event: invoke\ndata: ${message}\n\n`);
    };
    let release: (() => Promise<void>) | undefined;
    let beat: NodeJS.Timeout | undefined;
    try {
      // Any connection still holding the node elsewhere closes: invocations go to this one from now.
      await this.registry.supersede(tenant, hold);
      release = await this.hub.hold(inbox, hold.token, deliver);
      if (closed.aborted) return;
      res.writeHead(HttpStatus.OK, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write(`event: paired\ndata: ${JSON.stringify({ id: hold.nodeId, secret: hold.secret })}\n\n`);
      beat = setInterval(() => {
        if (!res.writableNeedDrain) res.write(': ping\n\n');
        void this.registry.beat(tenant, hold).then(
          (held) => held || end(),
          () => undefined,
        );
      }, NODE_BEAT_MS);
      await untilClosed(closed);
    } finally {
      ended = true;
      clearInterval(beat);
      await release?.().catch(() => undefined);
      await this.registry.drop(tenant, hold).catch(() => undefined);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.hub.close().catch(() => undefined);
  }
}

function pairingRefused(refusal: PairingRefusal, name: string): Error {
  if (refusal.kind === 'held')
    return new ConflictApiException(`node ${name} is already connected; reconnect with its id and secret, or remove it first.`);
  if (refusal.kind === 'operator_paired') {
    return new ForbiddenApiException(`node ${name} was paired with an operator key; an agent key cannot take it over.`);
  }
  return new ConflictApiException(
    `the tenant has ${refusal.max} paired nodes, the most it may have; remove one with DELETE /v1/nodes/{id}.`,
  );
}

function invalid(issue: { path: PropertyKey[]; message: string } | undefined): InvalidInputException {
  const field = issue?.path.map(String).join('.') || undefined;
  return new InvalidInputException(`${field ?? 'body'}: ${issue?.message ?? 'invalid'}`, field === undefined ? undefined : { field });
}
