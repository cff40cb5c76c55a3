import { Module } from '@nestjs/common';
import { NodesModule } from '../nodes/nodes.module';
import { ShellModule } from '../shell/shell.module';
import { ApprovalNotices } from './approval-notices.service';
import { McpDeployment } from './mcp-deployment.service';
import { ToolHosts } from './tool-hosts.service';
import { ToolKinds } from './tool-kinds.service';

@Module({
  imports: [ShellModule, NodesModule],
  providers: [ToolHosts, ToolKinds, McpDeployment, ApprovalNotices],
  exports: [ToolHosts, McpDeployment],
})
export class ToolsModule {}
