import { guestSource } from './guest-source';

/** Guest source for restartSafe cells (`determinism.guest.js`): evaluates to `install(clock, a, b, c, d)`. */
export const DETERMINISM_SOURCE = guestSource('determinism');
