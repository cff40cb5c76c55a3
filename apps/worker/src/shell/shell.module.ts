import { Module } from '@nestjs/common';
import { NodesModule } from '../nodes/nodes.module';
import { ShellConfinement } from './shell-confinement.service';
import { ShellHost } from './shell-host.service';
import { ShellProcessor } from './shell.processor';

@Module({
  imports: [NodesModule],
  providers: [ShellConfinement, ShellHost, ShellProcessor],
  exports: [ShellConfinement, ShellHost, ShellProcessor],
})
export class ShellModule {}
