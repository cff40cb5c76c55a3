import { Global, Module } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { KeySpace, PolicyStore } from '@codemode/events';
import { REDIS } from '../core/tokens';
import { PolicyController } from './policy.controller';
import { PolicyService } from './policy.service';

/** Global: the session routes read and write a session's `policy` through PolicyService. */
@Global()
@Module({
  controllers: [PolicyController],
  providers: [
    { provide: PolicyStore, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new PolicyStore(r, k) },
    PolicyService,
  ],
  exports: [PolicyService],
})
export class PolicyModule {}
