import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scriptLibrary } from './script-library';

const PROLOGUE = [
  'local LIMIT = math.min(5, 7)',
  'local script_now = nil',
  'local run_sets, run_dels = {}, {}',
  'local seen',
  'local function now() script_now = script_now or 1 return script_now end',
  'local function helper()',
  '  local inner = 1',
  '  return inner',
  'end',
].join('\n');

describe('scriptLibrary', () => {
  it('gives each per-call local its first value again at every call, and nothing else', () => {
    const { code } = scriptLibrary(PROLOGUE, 'return now()');
    const reset = /reset = function\(\)\n([\s\S]*?)\n {2}end/.exec(code)?.[1] ?? '';
    expect(reset.split('\n').map((line) => line.trim())).toEqual(['script_now = nil', 'run_sets, run_dels = {}, {}', 'seen = nil']);
  });

  it('makes the includes at the first call, not at load, where only `redis` exists', () => {
    const { code } = scriptLibrary(PROLOGUE, 'return now()');
    const setup = code.indexOf('local function setup()');
    expect(setup).toBeGreaterThan(0);
    expect(code.indexOf('local LIMIT = math.min(5, 7)')).toBeGreaterThan(setup);
    expect(code).toContain('if not main then setup() end');
  });

  it('is named by its code, so a changed script is another library and function', () => {
    const a = scriptLibrary(PROLOGUE, 'return now()');
    const b = scriptLibrary(PROLOGUE, 'return now() + 1');
    expect(a.name).toMatch(/^codemode_[0-9a-f]{40}$/);
    expect(b.name).not.toBe(a.name);
    expect(a.code.startsWith(`#!lua name=${a.name}\n`)).toBe(true);
    expect(a.code).toContain(`redis.register_function('${a.name}', call)`);
  });

  it('registers the function of a script that only reads with the no-writes flag, and only that one', () => {
    const reads = scriptLibrary(PROLOGUE, 'return now()', true);
    expect(reads.code).toContain(`redis.register_function{function_name='${reads.name}', callback=call, flags={'no-writes'}}`);
    expect(scriptLibrary(PROLOGUE, 'return now()').code).not.toContain('no-writes');
    expect(reads.name).not.toBe(scriptLibrary(PROLOGUE, 'return now()').name);
  });

  it('finds no include that writes into a constant (capitals), which a library would keep from call to call', () => {
    const dirs = [join(__dirname, '..', 'lua', 'includes'), join(__dirname, '..', '..', '..', 'store', 'src', 'lua', 'includes')];
    const writes = dirs.flatMap((dir) =>
      readdirSync(dir).flatMap((file) =>
        readFileSync(join(dir, file), 'utf8')
          .split('\n')
          .filter((line) => /\b[A-Z][A-Z0-9_]*(\[[^\]]*\]|\.[A-Za-z_]+)\s*=[^=]|table\.(insert|remove)\(\s*[A-Z][A-Z0-9_]*\b/.test(line))
          .map((line) => `${file}: ${line.trim()}`),
      ),
    );
    expect(writes).toEqual([]);
  });
});
