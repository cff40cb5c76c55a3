import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SandboxStartError } from '../errors';

/** A host value in a guest file, written `HOST.<NAME>` so the file stays plain, lintable JavaScript. */
const PLACEHOLDER = /\bHOST\.([A-Z][A-Z_]*)\b/g;

/**
 * The JavaScript of the guest file `<name>.guest.js` (beside this module; scripts/build.js copies
 * them into dist/), each `HOST.<NAME>` replaced by the JavaScript text `values` gives for NAME: a
 * JSON literal of a host constant, or another guest source. Read once, when its module loads.
 */
export function guestSource(name: string, values: Readonly<Record<string, string>> = {}): string {
  const text = readFileSync(join(__dirname, `${name}.guest.js`), 'utf8');
  return text.replace(PLACEHOLDER, (_match, key: string) => {
    const value = values[key];
    if (value === undefined) throw new SandboxStartError(`guest file ${name}.guest.js uses HOST.${key}, which has no value`);
    return value;
  });
}
