import { Module } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import type { Logger } from '@codemode/telemetry';
import { connect } from '../core/core.module';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { QuotasModule } from '../quotas/quotas.module';
import { NodeConnections } from './node-connections.service';
import { NodeHub } from './node-hub';
import { NodesController } from './nodes.controller';

@Module({
  imports: [QuotasModule],
  controllers: [NodesController],
  providers: [
    NodeConnections,
    {
      provide: NodeHub,
      inject: [APP_CONFIG, LOGGER],
      useFactory: (c: AppConfig, l: Logger) => new NodeHub(connect(c, l, 'api-nodes', { subscriber: true })),
    },
  ],
  exports: [NodeConnections],
})
export class NodesModule {}
