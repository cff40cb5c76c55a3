import { Module } from '@nestjs/common';
import { NodesModule } from '../nodes/nodes.module';
import { ShellCalls } from './shell-calls.service';
import { ShellConfinement } from './shell-confinement.service';
import { ShellExitNotifier } from './shell-exit-notifier.service';
import { ShellHost } from './shell-host.service';
import { ShellProcessor } from './shell.processor';

@Module({
  imports: [NodesModule],
  providers: [ShellCalls, ShellConfinement, ShellExitNotifier, ShellHost, ShellProcessor],
  exports: [ShellCalls, ShellConfinement, ShellHost, ShellProcessor],
})
export class ShellModule {}
