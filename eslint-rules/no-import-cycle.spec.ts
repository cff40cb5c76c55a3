import { RuleTester, type Rule } from 'eslint';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import tseslint from 'typescript-eslint';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the rule is CommonJS for eslint.config.mjs, without types
const noImportCycle = require('./no-import-cycle') as Rule.RuleModule;

const fixture = (path: string) => {
  const filename = join(__dirname, 'fixtures', path);
  return { name: path, filename, code: readFileSync(filename, 'utf8') };
};

const tester = new RuleTester({ languageOptions: { parser: tseslint.parser } });

tester.run('no-import-cycle', noImportCycle, {
  valid: [
    // a → b → lib; the edges back to a are type-only (`import type`, `{ type … }`, `export type … from`).
    fixture('acyclic/a.ts'),
    fixture('acyclic/b.ts'),
    fixture('acyclic/lib/src/index.ts'),
  ],
  invalid: [
    {
      ...fixture('cycle/a.ts'),
      errors: [{ messageId: 'cycle', data: { cycle: 'a.ts → b.ts → lib/src/index.ts → a.ts' } }],
    },
    {
      // The cycle goes through the `@fixture/lib` alias (tsconfig paths, a directory index).
      ...fixture('cycle/b.ts'),
      errors: [{ messageId: 'cycle', data: { cycle: 'b.ts → lib/src/index.ts → a.ts → b.ts' } }],
    },
    {
      // A re-export is an import at run time.
      ...fixture('cycle/lib/src/index.ts'),
      errors: [{ messageId: 'cycle', data: { cycle: 'lib/src/index.ts → a.ts → b.ts → lib/src/index.ts' } }],
    },
  ],
});
