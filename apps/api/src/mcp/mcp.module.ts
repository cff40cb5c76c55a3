import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { RunsModule } from '../runs/runs.module';
import { ToolsModule } from '../tools/tools.module';
import { McpController } from './mcp.controller';
import { McpEndpoint } from './mcp-endpoint.service';
import { McpTaskCalls } from './mcp-task-calls';
import { McpTaskRequests } from './mcp-task-requests';
import { McpTaskTermsReader } from './mcp-task-terms';

@Module({
  imports: [RunsModule, ToolsModule, MetricsModule],
  controllers: [McpController],
  providers: [McpEndpoint, McpTaskCalls, McpTaskRequests, McpTaskTermsReader],
})
export class McpModule {}
