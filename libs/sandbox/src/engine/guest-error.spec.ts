import { classifyCompileError, classifyGuestError, formatGuestError } from './guest-error';

describe('guest errors', () => {
  it('formats Name: message with frames, dropping prelude frames and fixing line-1 columns', () => {
    const stack = '    at f (cell.js:1:30)\n    at setTimeout (codemode:prelude.js:9:1)\n    at <anonymous> (cell.js:3:2)\n';
    expect(formatGuestError({ name: 'Error', message: 'boom', stack })).toBe(
      'Error: boom\n    at f (cell.js:1:10)\n    at <anonymous> (cell.js:3:2)',
    );
    expect(formatGuestError({ name: 'Error', message: '', stack: '' })).toBe('Error');
    expect(formatGuestError({ text: '42' })).toBe('42');
  });

  it('caps long stacks', () => {
    const stack = '    at r (cell.js:2:1)\n'.repeat(100);
    const lines = formatGuestError({ name: 'InternalError', message: 'stack overflow', stack }).split('\n');
    expect(lines).toHaveLength(14);
    expect(lines[13]).toBe('    ... 88 more frames');
  });

  it('maps module globals to invalid_input and the rest to internal_error', () => {
    for (const name of ['process', 'module', 'require']) {
      expect(classifyGuestError({ name: 'ReferenceError', message: `'${name}' is not defined` })).toEqual({
        code: 'invalid_input',
        phase: 'guest',
        error: 'code mode module access is disabled.',
      });
    }
    expect(classifyGuestError({ name: 'ReferenceError', message: "'foo' is not defined" }).code).toBe('internal_error');
    expect(classifyCompileError({ name: 'SyntaxError', message: 'bad', stack: '    at cell.js:2:1\n' })).toEqual({
      code: 'invalid_input',
      phase: 'input',
      error: 'SyntaxError: bad\n    at cell.js:2:1',
    });
  });
});
