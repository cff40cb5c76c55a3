import { checkExecInput } from './exec-input';
import { MODULE_ACCESS_ERROR } from './messages';
import { detectModuleAccess } from './module-access';

/** Parses as an async function body: decided on the tree. */
const PARSED_ACCESS = [
  'await import("fs")',
  'return import("node:fs");',
  'return import.meta.url;',
  'require("fs")',
  'require ("fs")',
  'const { readFile } = require("fs");',
  '\\u0072equire("fs")',
  '\\u{72}equire("fs")',
  'req\\u0075ire("fs")',
  'require?.("fs")',
  '(0, require)("fs")',
  '(require)("fs")',
  '((require))("fs")',
  '(a, b, require)("fs")',
  '(0, \\u0072equire)?.("fs")',
  '(cond ? require : other)("fs")',
  '(other || require)("fs")',
  '(r = require)("fs")',
  'new require("fs")',
  'require`fs`',
  'function load() { return require("fs"); }',
  'const load = () => require("fs");',
  'return `${require("fs")}`;',
  '[1].map(() => import("x"));',
  'if (x) { for (;;) { try { require("fs") } catch {} } }',
];

/** Does not parse as a function body; the module goal finds the declaration. */
const MODULE_GOAL_ACCESS = [
  'import fs from "fs";',
  'import "fs";',
  "import * as fs from 'fs';",
  "import { readFile } from 'fs';\nreturn 1;",
  'import fs from "fs"; return fs.readFileSync("x");',
  'import fs from "fs";\nawait fs.promises.readFile("x")',
];

/** Parses neither way: the regex over masked source decides. */
const FALLBACK_ACCESS = [
  'require("fs"); const = ;',
  'const x = ; import("fs")',
  'import fs from "fs"; with (x) {}',
  'const = ; return import.meta.url',
  '\\u0072equire("fs"); const = ;',
  '(0, require)("fs"); const = ;',
  'require?.("fs"); const = ;',
  '...require("x"); const = ;',
  // The tokenizer gives up on the unterminated string: nothing is masked, so it fails closed.
  '"unterminated ; require("fs")',
];

/** Look-alikes: strings, regexes, comments, property names, other identifiers. */
const LOOK_ALIKES = [
  'api.import(1)',
  'api["require"]("fs")',
  "api['import']",
  'x.require(1)',
  'x?.require(1)',
  'x . require(1)',
  '"require(\'fs\')"',
  '\'import("fs")\'',
  '`import fs from "fs"`',
  '/require\\(/.test(x)',
  '/import\\s+x/u',
  '// require("fs")\nreturn 1',
  '/* import("x") */ return 1',
  'const o = { require: 1, import: 2 }; return o.require + o.import;',
  'class A { require() {} import() {} static import = 1 }',
  'const importance = 1; const required = 2; return importance + required;',
  'return typeof require;',
  'const myrequire = () => 1; return myrequire("fs");',
  'return "\\u0072equire(\'fs\')";',
  'return 1;',
];

/** Broken code whose only module-ish text is masked away. */
const FALLBACK_LOOK_ALIKES = [
  '"require(\'fs\')"; const = ;',
  '// require("fs")\nconst = ;',
  '/require\\(/.test(x); const = ;',
  'x.require(1); const = ;',
  'api.import(1); const = ;',
  '`import ${x} from "y"`; const = ;',
  'const important = ;',
];

describe('detectModuleAccess', () => {
  it.each([...PARSED_ACCESS, ...MODULE_GOAL_ACCESS, ...FALLBACK_ACCESS])('flags %j', (code) => {
    expect(detectModuleAccess(code)).toBe(true);
  });

  it.each([...LOOK_ALIKES, ...FALLBACK_LOOK_ALIKES])('lets %j through', (code) => {
    expect(detectModuleAccess(code)).toBe(false);
  });

  it.each([...PARSED_ACCESS, ...MODULE_GOAL_ACCESS, ...FALLBACK_ACCESS])('exec refuses %j', (code) => {
    expect(checkExecInput({ title: 't', code })).toEqual({ ok: false, error: MODULE_ACCESS_ERROR });
  });

  it.each(LOOK_ALIKES)('exec accepts %j', (code) => {
    expect(checkExecInput({ title: 't', code }).ok).toBe(true);
  });

  it('stays linear over a megabyte of blanks before a property look-alike', () => {
    const code = `x.${' '.repeat(1_000_000)}require(1); const = ;`;
    const started = process.cpuUsage();
    expect(detectModuleAccess(code)).toBe(false);
    const used = process.cpuUsage(started);
    expect((used.user + used.system) / 1000).toBeLessThan(1000);
  });
});
