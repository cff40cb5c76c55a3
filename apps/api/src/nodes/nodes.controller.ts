import { Controller, Delete, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { KeyRole } from '@codemode/config';
import { NODE_ID_PATTERN, type NodeView } from '@codemode/contracts';
import { InvalidInputException } from '../http/api-errors';
import { ConnectionClosed } from '../http/connection-close';
import type { ApiRequest, ParsedBody } from '../http/request-context';
import { JsonBody, requireObjectBody, requireOperator, Role, Tenant } from '../http/request-params';
import { NodeConnections } from './node-connections.service';

/** SPEC §15: paired nodes. `connect` is the node's own long-lived connection; the rest are REST. */
@Controller('v1/nodes')
export class NodesController {
  constructor(private readonly nodes: NodeConnections) {}

  @Get()
  list(@Tenant() tenant: string): Promise<{ nodes: NodeView[] }> {
    return this.nodes.list(tenant);
  }

  @Post('connect')
  connect(
    @Tenant() tenant: string,
    @Role() role: KeyRole,
    @JsonBody() body: ParsedBody,
    @Res() res: ServerResponse,
    @ConnectionClosed() closed: AbortSignal,
  ): Promise<void> {
    return this.nodes.connect(tenant, role, requireObjectBody(body), res, closed);
  }

  @Post(':id/results')
  @HttpCode(202)
  answer(@Tenant() tenant: string, @Param('id') id: string, @JsonBody() body: ParsedBody): Promise<{ accepted: true }> {
    return this.nodes.answer(tenant, nodeId(id), requireObjectBody(body));
  }

  @Delete(':id')
  remove(@Tenant() tenant: string, @Req() req: ApiRequest, @Param('id') id: string): Promise<{ id: string; deleted: true }> {
    requireOperator(req, 'remove a node');
    return this.nodes.remove(tenant, nodeId(id));
  }
}

function nodeId(id: string): string {
  if (!NODE_ID_PATTERN.test(id)) throw new InvalidInputException('node id must be nd_<uuid>.', { field: 'id' });
  return id;
}
