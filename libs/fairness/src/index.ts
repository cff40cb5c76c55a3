export { FairQueue } from './fair-queue';
export { InFlightLimit, type InFlightBounds } from './in-flight-limit';
