import { Controller, Get } from '@nestjs/common';
import type { SessionRef } from '@codemode/contracts';
import { SessionStore } from '@codemode/store';
import { NotFoundApiException } from '../http/api-errors';
import { Session } from '../http/request-params';

@Controller('v1/sessions/:sid/store')
export class StoreController {
  constructor(private readonly store: SessionStore) {}

  /** The committed session store (SPEC §2); 404 for a session never created. */
  @Get()
  async get(@Session() ref: SessionRef): Promise<{ values: Record<string, unknown> }> {
    const values = await this.store.values(ref);
    if (!values) throw new NotFoundApiException(`session ${ref.sessionId} not found.`);
    return values;
  }
}
