import { z } from 'zod';

/**
 * Client-chosen session id (SPEC §1): never made of dots only, since `.` and `..` (also sent
 * percent-encoded, which the router decodes) would name a folder above the session's workspace.
 */
export const SESSION_ID_PATTERN = /^(?!\.+$)[A-Za-z0-9._:-]{1,128}$/;
/** What every route answers for a session id that does not match SESSION_ID_PATTERN. */
export const INVALID_SESSION_ID_MESSAGE = 'sessionId must match [A-Za-z0-9._:-]{1,128} and not be made of dots only.';
export const SessionIdSchema = z.string().regex(SESSION_ID_PATTERN);

/** Run ids are `cm_<uuid>`. */
export const RUN_ID_PATTERN = /^cm_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const TenantIdSchema = z.string().min(1).max(128);

/** Where a request lives: every key and event is scoped by tenant and session. */
export const SessionRefSchema = z.object({ tenant: TenantIdSchema, sessionId: SessionIdSchema });
export type SessionRef = z.infer<typeof SessionRefSchema>;
