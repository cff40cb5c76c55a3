import { Module } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { ApprovalLedger, KeySpace, PolicyStore } from '@codemode/events';
import { REDIS } from '../core/tokens';
import { ShellModule } from '../shell/shell.module';
import { ToolHosts } from './tool-hosts.service';

@Module({
  imports: [ShellModule],
  providers: [
    ToolHosts,
    { provide: PolicyStore, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new PolicyStore(r, k) },
    { provide: ApprovalLedger, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new ApprovalLedger(r, k) },
  ],
  exports: [ToolHosts],
})
export class ToolsModule {}
