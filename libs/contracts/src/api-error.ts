import { z } from 'zod';

export const API_ERROR_CODES = [
  'invalid_input',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'runtime_unavailable',
  'internal_error',
  'tenant_limit',
  /** SPEC §11: an agent key's REST shell call that the session's tool policy does not allow. */
  'policy_denied',
] as const;
export const ApiErrorCodeSchema = z.enum(API_ERROR_CODES);
export type ApiErrorCode = z.infer<typeof ApiErrorCodeSchema>;

/** Body of every non-2xx answer outside exec/wait. */
export const ApiErrorBodySchema = z.object({
  error: z.string(),
  code: ApiErrorCodeSchema,
  details: z.unknown().optional(),
});
export type ApiErrorBody = z.infer<typeof ApiErrorBodySchema>;
