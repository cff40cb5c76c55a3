import { VALUE_NOT_SERIALIZABLE_PREFIX } from '@codemode/cells';
import { guestSource } from './guest-source';

/** Guest source of `results`, `store`/`load`, `skills`, `nodes` and `agents` (`platform-surfaces.guest.js`), which the tool API embeds. */
const PLATFORM_SURFACES_SOURCE = guestSource('platform-surfaces', {
  VALUE_NOT_SERIALIZABLE_PREFIX: JSON.stringify(VALUE_NOT_SERIALIZABLE_PREFIX),
});

/** Guest source of the tool-facing API (`tool-api.guest.js`): the function the prelude embeds and calls. */
export const TOOL_API_SOURCE = guestSource('tool-api', { PLATFORM_SURFACES: PLATFORM_SURFACES_SOURCE });
