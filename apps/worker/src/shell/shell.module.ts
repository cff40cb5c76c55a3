import { Module } from '@nestjs/common';
import { NodesModule } from '../nodes/nodes.module';
import { ShellConfinement } from './shell-confinement.service';
import { ShellExitNotifier } from './shell-exit-notifier.service';
import { ShellHost } from './shell-host.service';
import { ShellProcessor } from './shell.processor';

@Module({
  imports: [NodesModule],
  providers: [ShellConfinement, ShellExitNotifier, ShellHost, ShellProcessor],
  exports: [ShellConfinement, ShellHost, ShellProcessor],
})
export class ShellModule {}
