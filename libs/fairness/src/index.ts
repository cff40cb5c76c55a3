export { FairQueue } from './fair-queue';
