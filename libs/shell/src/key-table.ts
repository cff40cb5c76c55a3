/** Terminal byte sequences for `send-keys` and `paste` (tmux-style key names, xterm encodings). */
const ESC = '\x1b';

export const BRACKETED_PASTE_START = `${ESC}[200~`;
export const BRACKETED_PASTE_END = `${ESC}[201~`;

/** Named keys, matched case-insensitively; aliases as tmux spells them. */
const NAMED_KEYS: ReadonlyMap<string, string> = new Map([
  ['enter', '\r'],
  ['return', '\r'],
  ['tab', '\t'],
  ['escape', ESC],
  ['esc', ESC],
  ['space', ' '],
  ['bspace', '\x7f'],
  ['backspace', '\x7f'],
  ['up', `${ESC}[A`],
  ['down', `${ESC}[B`],
  ['right', `${ESC}[C`],
  ['left', `${ESC}[D`],
  ['home', `${ESC}[1~`],
  ['end', `${ESC}[4~`],
  ['pageup', `${ESC}[5~`],
  ['pgup', `${ESC}[5~`],
  ['ppage', `${ESC}[5~`],
  ['pagedown', `${ESC}[6~`],
  ['pgdn', `${ESC}[6~`],
  ['npage', `${ESC}[6~`],
  ['insert', `${ESC}[2~`],
  ['ic', `${ESC}[2~`],
  ['delete', `${ESC}[3~`],
  ['del', `${ESC}[3~`],
  ['dc', `${ESC}[3~`],
  ['btab', `${ESC}[Z`],
  ['f1', `${ESC}OP`],
  ['f2', `${ESC}OQ`],
  ['f3', `${ESC}OR`],
  ['f4', `${ESC}OS`],
  ['f5', `${ESC}[15~`],
  ['f6', `${ESC}[17~`],
  ['f7', `${ESC}[18~`],
  ['f8', `${ESC}[19~`],
  ['f9', `${ESC}[20~`],
  ['f10', `${ESC}[21~`],
  ['f11', `${ESC}[23~`],
  ['f12', `${ESC}[24~`],
]);

/** Keys whose xterm encoding takes a modifier parameter (`ESC[1;5A` is C-Up). */
const MODIFIABLE = new Set([
  'up',
  'down',
  'left',
  'right',
  'home',
  'end',
  'pageup',
  'pgup',
  'ppage',
  'pagedown',
  'pgdn',
  'npage',
  'insert',
  'ic',
  'delete',
  'del',
  'dc',
]);

/** Application cursor mode (DECCKM, switched on by `ESC[?1h`) sends SS3 arrows instead of CSI. */
const APPLICATION_CURSOR: Readonly<Record<string, string>> = {
  up: `${ESC}OA`,
  down: `${ESC}OB`,
  right: `${ESC}OC`,
  left: `${ESC}OD`,
  home: `${ESC}OH`,
  end: `${ESC}OF`,
};

export type CursorKeyMode = 'normal' | 'application';

interface Modifiers {
  ctrl: boolean;
  alt: boolean;
  shift: boolean;
}

export interface KeyRequest {
  keys?: string[];
  hex?: string[];
  literal?: string;
}
export interface EncodedKeys {
  data: Buffer;
  warnings: string[];
}

/** Encodes `literal`, then `hex` bytes, then `keys`, in that order (as OpenClaw does). */
export function encodeKeys(request: KeyRequest, mode: CursorKeyMode = 'normal'): EncodedKeys {
  const warnings: string[] = [];
  const parts: Buffer[] = [];
  if (request.literal) parts.push(Buffer.from(request.literal, 'utf8'));
  for (const raw of request.hex ?? []) {
    const byte = parseHexByte(raw);
    if (byte === undefined) warnings.push(`Invalid hex byte: ${raw}`);
    // Raw bytes, not a UTF-8 encoding of the code point: 0x80-0xff must reach the child unchanged.
    else parts.push(Buffer.from([byte]));
  }
  for (const token of request.keys ?? []) parts.push(Buffer.from(encodeKey(token, warnings, mode), 'utf8'));
  return { data: Buffer.concat(parts), warnings };
}

/** Wraps pasted text in bracketed-paste markers so shells and editors take it as one paste. */
export function encodePaste(text: string, bracketed = true): string {
  return bracketed ? `${BRACKETED_PASTE_START}${text}${BRACKETED_PASTE_END}` : text;
}

function encodeKey(raw: string, warnings: string[], mode: CursorKeyMode): string {
  const token = raw.trim();
  if (!token) return '';
  if (token.length === 2 && token.startsWith('^')) {
    const ctrl = ctrlChar(token[1]);
    if (ctrl) return ctrl;
  }
  const { mods, base, hadModifiers } = parseModifiers(token);
  const name = base.toLowerCase();
  if (name === 'tab' && mods.shift) return `${ESC}[Z`;
  const anyMod = mods.ctrl || mods.alt || mods.shift;
  if (!anyMod && mode === 'application' && APPLICATION_CURSOR[name]) return APPLICATION_CURSOR[name];
  const seq = NAMED_KEYS.get(name);
  if (seq !== undefined) {
    if (anyMod && MODIFIABLE.has(name)) {
      const modified = withXtermModifier(seq, 1 + (mods.shift ? 1 : 0) + (mods.alt ? 2 : 0) + (mods.ctrl ? 4 : 0));
      if (modified) return modified;
    }
    return mods.alt ? `${ESC}${seq}` : seq;
  }
  if (base.length === 1) return withCharModifiers(base, mods);
  if (hadModifiers) warnings.push(`Unknown key "${base}" for modifiers; sending literal.`);
  return base;
}

/** `C-`, `M-`, `S-` prefixes, in any order and combination (`C-M-x`). */
function parseModifiers(token: string): { mods: Modifiers; base: string; hadModifiers: boolean } {
  const mods: Modifiers = { ctrl: false, alt: false, shift: false };
  let rest = token;
  let hadModifiers = false;
  while (rest.length > 2 && rest[1] === '-') {
    const m = rest[0].toLowerCase();
    if (m === 'c') mods.ctrl = true;
    else if (m === 'm') mods.alt = true;
    else if (m === 's') mods.shift = true;
    else break;
    hadModifiers = true;
    rest = rest.slice(2);
  }
  return { mods, base: rest, hadModifiers };
}

function withCharModifiers(char: string, mods: Modifiers): string {
  let value = mods.shift && /[a-z]/.test(char) ? char.toUpperCase() : char;
  if (mods.ctrl) value = ctrlChar(value) ?? value;
  return mods.alt ? `${ESC}${value}` : value;
}

/** `C-c` → 0x03: the control character is the letter's code with the top bits cleared. */
function ctrlChar(char: string): string | undefined {
  if (char === '?') return '\x7f';
  const code = char.toUpperCase().charCodeAt(0);
  return code >= 64 && code <= 95 ? String.fromCharCode(code & 0x1f) : undefined;
}

function withXtermModifier(seq: string, modifier: number): string | undefined {
  if (!seq.startsWith(`${ESC}[`)) return undefined;
  const body = seq.slice(2);
  const numbered = /^(\d+)([~A-Z])$/.exec(body);
  if (numbered) return `${ESC}[${numbered[1]};${modifier}${numbered[2]}`;
  if (/^[A-DHF]$/.test(body)) return `${ESC}[1;${modifier}${body}`;
  return undefined;
}

function parseHexByte(raw: string): number | undefined {
  const trimmed = raw.trim().toLowerCase();
  const digits = trimmed.startsWith('0x') ? trimmed.slice(2) : trimmed;
  return /^[0-9a-f]{1,2}$/.test(digits) ? Number.parseInt(digits, 16) : undefined;
}
