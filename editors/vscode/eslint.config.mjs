// ESLint: typescript-eslint's type-checked recommended rules (and a few of its strict ones) on
// the TypeScript, each file with the types of its own tsconfig (tsconfig.json is
// solution-style: the project service finds the project that includes the file); ESLint's
// recommended rules on the plain JavaScript. Prettier does the formatting and madge the
// import cycles (npm run lint runs all three).

import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['dist/', 'out/', '.toolchain/', 'test-artifacts/']),
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // From strictTypeChecked, the ones that cost little here.
      '@typescript-eslint/no-unnecessary-condition': 'error',
      '@typescript-eslint/use-unknown-in-catch-callback-variable': 'error',
      '@typescript-eslint/no-meaningless-void-operator': 'error',
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test runs what describe/it/test register; their promises need no await.
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test'] }] },
      ],
      // `const { dropped, ...rest } = x` is how a property is left out of a copy.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  {
    files: ['**/*.{js,mjs,cjs}'],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.node },
  },
  {
    // These drive a browser: their page.evaluate callbacks run in the page.
    files: ['test/**/*.mjs'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
);
