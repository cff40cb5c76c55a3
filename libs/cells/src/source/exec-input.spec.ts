import { checkExecInput } from './exec-input';
import {
  AWAIT_RESULTS_ERROR,
  BODY_NOT_OBJECT_ERROR,
  CODE_COMMAND_MISMATCH_ERROR,
  CODE_REQUIRED_ERROR,
  CODE_TOO_LARGE_ERROR,
  JAVASCRIPT_ONLY_ERROR,
  MAX_CODE_BYTES,
  MODULE_ACCESS_ERROR,
  RESTART_SAFE_ERROR,
  SHELL_SOURCE_ERROR,
  TITLE_REQUIRED_ERROR,
  TITLE_TOO_LONG_ERROR,
} from './messages';

const ok = { title: 'Sum', code: 'return 1 + 1;' };

describe('checkExecInput messages', () => {
  it('spells every message exactly as SPEC §3 does', () => {
    expect(BODY_NOT_OBJECT_ERROR).toBe('request body must be a JSON object.');
    expect(TITLE_REQUIRED_ERROR).toBe('title must be a non-empty string.');
    expect(TITLE_TOO_LONG_ERROR).toBe('title must be at most 120 characters.');
    expect(CODE_COMMAND_MISMATCH_ERROR).toBe('code and command must match when both are provided.');
    expect(CODE_REQUIRED_ERROR).toBe('code or command must be a non-empty string.');
    expect(JAVASCRIPT_ONLY_ERROR).toBe(
      'Code Mode accepts JavaScript only. Remove language and typecheck; use API.read(...) for tool types.',
    );
    expect(RESTART_SAFE_ERROR).toBe('restartSafe must be a boolean.');
    expect(AWAIT_RESULTS_ERROR).toBe('awaitResults must be a boolean.');
    expect(CODE_TOO_LARGE_ERROR).toBe('code exceeds 1 MiB.');
    expect(MODULE_ACCESS_ERROR).toBe('code mode module access is disabled.');
    expect(SHELL_SOURCE_ERROR).toBe(
      'code-mode exec runs JavaScript or TypeScript, not shell commands. Call an enabled async tool global from guest JavaScript; use catalog.search(query) when the bounded quick index omits it. Do not retry the same shell command as code.',
    );
  });
});

describe('checkExecInput accepts', () => {
  it('a minimal body, resolving the flags to false', () => {
    expect(checkExecInput(ok)).toEqual({
      ok: true,
      input: { title: 'Sum', code: 'return 1 + 1;', restartSafe: false, awaitResults: false },
    });
  });

  it('the flags when boolean, and ignores unknown fields', () => {
    expect(checkExecInput({ ...ok, restartSafe: true, awaitResults: true, extra: 1 })).toEqual({
      ok: true,
      input: { title: 'Sum', code: 'return 1 + 1;', restartSafe: true, awaitResults: true },
    });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['command alone', { title: 't', command: 'return 2' }, 'return 2'],
    ['code and command equal', { title: 't', code: 'return 2', command: 'return 2' }, 'return 2'],
    ['blank code beside command', { title: 't', code: '  ', command: 'return 2' }, 'return 2'],
    ['blank command beside code', { title: 't', code: 'return 2', command: '\n' }, 'return 2'],
    ['non-string code beside command', { title: 't', code: 5, command: 'return 2' }, 'return 2'],
    ['code kept as written', { title: 't', code: '\n  return 2;  \n' }, '\n  return 2;  \n'],
  ])('%s', (_name, body, code) => {
    const result = checkExecInput(body);
    expect(result).toEqual({ ok: true, input: expect.objectContaining({ code }) });
  });

  it.each([
    ['120 characters', 'x'.repeat(120)],
    ['120 emoji (240 UTF-16 units)', '😀'.repeat(120)],
    ['padded', '  Sum  '],
  ])('a title of %s, kept as written', (_name, title) => {
    expect(checkExecInput({ ...ok, title })).toEqual({ ok: true, input: expect.objectContaining({ title }) });
  });
});

describe('checkExecInput refuses, one rule at a time', () => {
  it.each<[string, unknown, string]>([
    ['null body', null, BODY_NOT_OBJECT_ERROR],
    ['undefined body', undefined, BODY_NOT_OBJECT_ERROR],
    ['array body', [ok], BODY_NOT_OBJECT_ERROR],
    ['string body', JSON.stringify(ok), BODY_NOT_OBJECT_ERROR],
    ['number body', 42, BODY_NOT_OBJECT_ERROR],
    ['missing title', { code: 'return 1' }, TITLE_REQUIRED_ERROR],
    ['null title', { ...ok, title: null }, TITLE_REQUIRED_ERROR],
    ['number title', { ...ok, title: 7 }, TITLE_REQUIRED_ERROR],
    ['empty title', { ...ok, title: '' }, TITLE_REQUIRED_ERROR],
    ['blank title', { ...ok, title: ' \n\t ' }, TITLE_REQUIRED_ERROR],
    ['121-character title', { ...ok, title: 'x'.repeat(121) }, TITLE_TOO_LONG_ERROR],
    ['121-emoji title', { ...ok, title: '😀'.repeat(121) }, TITLE_TOO_LONG_ERROR],
    ['huge title', { ...ok, title: 'x'.repeat(2_000_000) }, TITLE_TOO_LONG_ERROR],
    ['different code and command', { title: 't', code: 'return 1', command: 'return 2' }, CODE_COMMAND_MISMATCH_ERROR],
    ['code and command differing in blanks', { title: 't', code: 'return 1', command: 'return 1 ' }, CODE_COMMAND_MISMATCH_ERROR],
    ['neither code nor command', { title: 't' }, CODE_REQUIRED_ERROR],
    ['empty code', { title: 't', code: '' }, CODE_REQUIRED_ERROR],
    ['blank code and command', { title: 't', code: ' ', command: '\t' }, CODE_REQUIRED_ERROR],
    ['non-string code', { title: 't', code: ['return 1'] }, CODE_REQUIRED_ERROR],
    ['null command', { title: 't', command: null }, CODE_REQUIRED_ERROR],
    ['language javascript', { ...ok, language: 'javascript' }, JAVASCRIPT_ONLY_ERROR],
    ['language typescript', { ...ok, language: 'typescript' }, JAVASCRIPT_ONLY_ERROR],
    ['language null', { ...ok, language: null }, JAVASCRIPT_ONLY_ERROR],
    ['typecheck false', { ...ok, typecheck: false }, JAVASCRIPT_ONLY_ERROR],
    ['restartSafe string', { ...ok, restartSafe: 'true' }, RESTART_SAFE_ERROR],
    ['restartSafe null', { ...ok, restartSafe: null }, RESTART_SAFE_ERROR],
    ['restartSafe number', { ...ok, restartSafe: 1 }, RESTART_SAFE_ERROR],
    ['awaitResults number', { ...ok, awaitResults: 1 }, AWAIT_RESULTS_ERROR],
    ['awaitResults null', { ...ok, awaitResults: null }, AWAIT_RESULTS_ERROR],
    ['awaitResults string', { ...ok, awaitResults: 'false' }, AWAIT_RESULTS_ERROR],
    ['module access', { ...ok, code: 'return require("fs")' }, MODULE_ACCESS_ERROR],
    ['shell source', { ...ok, code: 'ls -la /workspace/' }, SHELL_SOURCE_ERROR],
    ['syntax error', { ...ok, code: 'return (' }, 'SyntaxError: Unexpected end of input (line 1, column 9)'],
  ])('%s', (_name, body, error) => {
    expect(checkExecInput(body)).toEqual({ ok: false, error });
  });

  it('reads only the fields the client sent, not inherited ones', () => {
    const body = Object.assign(Object.create({ language: 'typescript', restartSafe: 'x' }) as object, ok);
    expect(checkExecInput(body).ok).toBe(true);
  });
});

describe('checkExecInput order: the first broken rule answers', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['title before code', { title: '', code: 'return 1', command: 'return 2' }, TITLE_REQUIRED_ERROR],
    ['title length before code', { title: 'x'.repeat(121) }, TITLE_TOO_LONG_ERROR],
    ['mismatch before language', { title: 't', code: 'a', command: 'b', language: 'ts' }, CODE_COMMAND_MISMATCH_ERROR],
    ['missing code before language', { title: 't', language: 'ts' }, CODE_REQUIRED_ERROR],
    ['language before restartSafe', { ...ok, language: 'ts', restartSafe: 1 }, JAVASCRIPT_ONLY_ERROR],
    ['restartSafe before awaitResults', { ...ok, restartSafe: 1, awaitResults: 1 }, RESTART_SAFE_ERROR],
    ['awaitResults before size', { ...ok, code: 'x'.repeat(MAX_CODE_BYTES + 1), awaitResults: 1 }, AWAIT_RESULTS_ERROR],
    ['size before module access', { ...ok, code: `require("fs");${' '.repeat(MAX_CODE_BYTES)}` }, CODE_TOO_LARGE_ERROR],
    ['module access before shell', { ...ok, code: 'ls -la; require("fs")' }, MODULE_ACCESS_ERROR],
    ['module access before syntax', { ...ok, code: 'import fs from "fs"; const = ;' }, MODULE_ACCESS_ERROR],
    ['shell before syntax', { ...ok, code: 'echo hello world' }, SHELL_SOURCE_ERROR],
  ])('%s', (_name, body, error) => {
    expect(checkExecInput(body)).toEqual({ ok: false, error });
  });
});

describe('checkExecInput 1 MiB boundary (UTF-8 bytes of the code)', () => {
  /** A valid cell of exactly `bytes` UTF-8 bytes, padded with `unit` inside a comment. */
  const cellOfBytes = (bytes: number, unit: string): string => {
    const head = 'return 1; //';
    const unitBytes = Buffer.byteLength(unit);
    const room = bytes - head.length;
    return head + unit.repeat(Math.floor(room / unitBytes)) + 'x'.repeat(room % unitBytes);
  };

  it.each([
    ['ASCII', 'a'],
    ['2-byte', 'é'],
    ['3-byte', '€'],
    ['4-byte', '😀'],
  ])('%s: exactly 1 MiB runs, one byte more is refused', (_name, unit) => {
    const atLimit = cellOfBytes(MAX_CODE_BYTES, unit);
    expect(Buffer.byteLength(atLimit)).toBe(MAX_CODE_BYTES);
    expect(checkExecInput({ title: 't', code: atLimit }).ok).toBe(true);
    const over = cellOfBytes(MAX_CODE_BYTES + 1, unit);
    expect(checkExecInput({ title: 't', code: over })).toEqual({ ok: false, error: CODE_TOO_LARGE_ERROR });
  });

  it('counts bytes, not characters: 600 000 two-byte characters are over', () => {
    const code = `return "${'é'.repeat(600_000)}";`;
    expect(code.length).toBeLessThan(MAX_CODE_BYTES);
    expect(checkExecInput({ title: 't', code })).toEqual({ ok: false, error: CODE_TOO_LARGE_ERROR });
  });

  it('applies to command as well as code', () => {
    const command = cellOfBytes(MAX_CODE_BYTES + 1, 'a');
    expect(checkExecInput({ title: 't', command })).toEqual({ ok: false, error: CODE_TOO_LARGE_ERROR });
  });
});
