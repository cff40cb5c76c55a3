import { Module } from '@nestjs/common';
import { ShellConfinement } from './shell-confinement.service';
import { ShellHost } from './shell-host.service';
import { ShellProcessor } from './shell.processor';

@Module({ providers: [ShellConfinement, ShellHost, ShellProcessor], exports: [ShellConfinement, ShellHost, ShellProcessor] })
export class ShellModule {}
