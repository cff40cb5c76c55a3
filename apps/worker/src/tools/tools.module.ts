import { Module } from '@nestjs/common';
import { ShellModule } from '../shell/shell.module';
import { ToolHosts } from './tool-hosts.service';

@Module({
  imports: [ShellModule],
  providers: [ToolHosts],
  exports: [ToolHosts],
})
export class ToolsModule {}
