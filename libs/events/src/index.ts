export * from './platform';
export * from './log';
export * from './runs';
export * from './ledgers';
export { createEventStores, eventStoreSettings, type EventStores } from './event-stores';
