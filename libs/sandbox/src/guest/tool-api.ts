import { VALUE_NOT_SERIALIZABLE_PREFIX } from '@codemode/cells';
import { guestSource } from './guest-source';

/** Guest source of the tool-facing API (`tool-api.guest.js`): the function the prelude embeds and calls. */
export const TOOL_API_SOURCE = guestSource('tool-api', {
  VALUE_NOT_SERIALIZABLE_PREFIX: JSON.stringify(VALUE_NOT_SERIALIZABLE_PREFIX),
});
