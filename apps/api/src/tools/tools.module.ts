import { Module } from '@nestjs/common';
import { TenantToolLists } from './tenant-tool-lists';
import { TenantToolsController } from './tenant-tools.controller';
import { TenantToolsService } from './tenant-tools.service';
import { ToolEndpointCheck } from './tool-endpoint-check';
import { ToolsController } from './tools.controller';
import { ToolsService } from './tools.service';

@Module({
  controllers: [ToolsController, TenantToolsController],
  providers: [ToolsService, TenantToolsService, TenantToolLists, ToolEndpointCheck],
  exports: [ToolsService],
})
export class ToolsModule {}
