import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import noImportCycle from './eslint-rules/no-import-cycle.js';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.data/**', 'scripts/**', '*.js', '*.mjs', 'eslint-rules/fixtures/**'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      // A lib is used through its index only: its insides may change without touching its users.
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@codemode/*/*'], message: 'Import a lib through its index (@codemode/<lib>), not its insides.' },
            {
              group: ['**/libs/*/src/**', '../*/src/**', '../../*/src/**'],
              message: 'Import another lib through @codemode/<lib>, not by a relative path into it.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.ts'],
    plugins: { local: { rules: { 'no-import-cycle': noImportCycle } } },
    rules: { 'local/no-import-cycle': 'error' },
  },
  {
    // Guest JavaScript runs inside QuickJS, not Node: only the language's own globals exist there, plus
    // `HOST.<NAME>`, a host value the loader (guest/guest-source.ts) writes into the text before evaluation.
    files: ['libs/**/guest/*.guest.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { ecmaVersion: 2023, sourceType: 'script', globals: { HOST: 'readonly' } },
  },
  {
    // The repository's own lint rules (CommonJS, loaded by this file) and their spec: outside tsconfig.json.
    files: ['eslint-rules/**'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    files: ['eslint-rules/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.spec.ts', '**/*.int-spec.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
