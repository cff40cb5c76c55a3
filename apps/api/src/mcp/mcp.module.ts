import { Module } from '@nestjs/common';
import { RunsModule } from '../runs/runs.module';
import { ToolsModule } from '../tools/tools.module';
import { McpController } from './mcp.controller';
import { McpEndpoint } from './mcp-endpoint.service';

@Module({ imports: [RunsModule, ToolsModule], controllers: [McpController], providers: [McpEndpoint] })
export class McpModule {}
