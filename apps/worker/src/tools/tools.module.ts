import { Module } from '@nestjs/common';
import { NodesModule } from '../nodes/nodes.module';
import { ShellModule } from '../shell/shell.module';
import { ToolHosts } from './tool-hosts.service';

@Module({
  imports: [ShellModule, NodesModule],
  providers: [ToolHosts],
  exports: [ToolHosts],
})
export class ToolsModule {}
