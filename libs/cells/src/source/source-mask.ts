import { tokenizer, tokTypes, type Token } from 'acorn';

/**
 * Blanks out what cannot execute — string, template and regex literal text and comments — so a
 * regex over the result only sees code. Used only when the cell does not parse (SPEC §3: "when
 * parsing fails, fall back to a regex over the source with … literals and comments masked").
 *
 * Quote and slash delimiters are kept, so `import "x"` still reads as an import of something.
 * An identifier spelled with unicode escapes (`\u0072equire`) is rewritten to the name it denotes
 * (padded with spaces), because the engine resolves it to that name.
 *
 * If the tokenizer itself fails part-way, nothing is masked: a mis-lexed token earlier on could
 * have hidden real code, and for module access failing closed is the safe direction. Escapes are
 * still decoded then.
 */
export function maskLiteralsAndComments(code: string): string {
  const chars = code.split('');
  const blank = (from: number, to: number): void => {
    for (let index = Math.max(0, from); index < Math.min(to, chars.length); index += 1) {
      const char = chars[index];
      // Keeping line breaks keeps line numbers and `\s` boundaries where they were.
      if (char !== '\n' && char !== '\r') chars[index] = ' ';
    }
  };
  try {
    const tokens = tokenizer(code, {
      ecmaVersion: 'latest',
      allowReturnOutsideFunction: true,
      allowAwaitOutsideFunction: true,
      allowHashBang: true,
      onComment: (_block, _text, start, end) => blank(start, end),
    });
    for (const token of tokens) maskToken(code, chars, token, blank);
  } catch {
    return decodeIdentifierEscapes(code);
  }
  return chars.join('');
}

function maskToken(code: string, chars: string[], token: Token, blank: (from: number, to: number) => void): void {
  if (token.type === tokTypes.string) {
    blank(token.start + 1, token.end - 1);
  } else if (token.type === tokTypes.regexp) {
    // The pattern between the slashes; the flags after the closing slash go too.
    const close = code.lastIndexOf('/', token.end - 1);
    blank(token.start + 1, close);
    blank(close + 1, token.end);
  } else if (token.type === tokTypes.template || token.type === tokTypes.invalidTemplate) {
    // Template text between the backtick/`${`/`}` tokens; `${…}` expressions stay visible.
    blank(token.start, token.end);
  } else if (token.type === tokTypes.name) {
    const name = (token as Token & { value: string }).value;
    if (code.slice(token.start, token.end) !== name) {
      for (let index = token.start; index < token.end; index += 1) chars[index] = name[index - token.start] ?? ' ';
    }
  }
}

const IDENTIFIER_ESCAPE = /\\u(?:\{([0-9a-fA-F]+)\}|([0-9a-fA-F]{4}))/gu;

/** Rewrites every `\uXXXX` / `\u{X}` to its character: crude, but only used to fail closed. */
function decodeIdentifierEscapes(code: string): string {
  return code.replace(IDENTIFIER_ESCAPE, (escape, braced: string | undefined, plain: string | undefined) => {
    const codePoint = parseInt(braced ?? plain ?? '', 16);
    return codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : escape;
  });
}
