/** The event log: appending, reading, encoding, the session index it keeps, and the projections rebuilt from it. */
export { EventLog, MAX_PAGE, type AppendInput } from './event-log';
export { MAX_BATCH_EVENTS, SameTickAppends } from './same-tick-appends';
export { encodeRunRequested, type LoggedEvent } from './event-encoding';
export { packEventData, splicedEventData, unpackEventData } from './event-packing';
export { type SessionRecord, type SessionSettings } from './projections/views';
export { rebuildSession } from './projections/rebuild-session';
export { rebuildRun } from './projections/rebuild-run';
export { rebuildTranscript } from './projections/rebuild-transcript';
export { rebuildStore, storeBytes } from './projections/rebuild-store';
export { rebuildClientToolNames } from './projections/rebuild-client-tools';
export { SessionIndex } from './session-index';
