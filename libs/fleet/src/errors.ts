import { EventsError } from '@codemode/events';

/**
 * Thrown when every uid of `CODEMODE_SHELL_UID_RANGE` is already some tenant's. An `EventsError`,
 * so callers map it by its `code` like every other store error.
 */
export class TenantUidsExhaustedError extends EventsError {
  readonly code = 'runtime_unavailable';
  constructor(first: number, last: number) {
    super(`every uid of CODEMODE_SHELL_UID_RANGE ${first}-${last} belongs to a tenant; widen the range`);
    this.name = 'TenantUidsExhaustedError';
  }
}
