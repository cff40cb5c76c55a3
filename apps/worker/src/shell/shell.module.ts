import { Module } from '@nestjs/common';
import { ShellHost } from './shell-host.service';
import { ShellProcessor } from './shell.processor';

@Module({ providers: [ShellHost, ShellProcessor], exports: [ShellHost, ShellProcessor] })
export class ShellModule {}
