import { guestSource } from './guest-source';

/** Guest `TextEncoder` / `TextDecoder` (`text-codec.guest.js`), installed on `globalThis` before user code. */
export const TEXT_CODEC_SOURCE = guestSource('text-codec');
