// ESLint (flat config): typescript-eslint's type-aware recommended rules for every TypeScript file,
// the plain recommended rules for the two CommonJS scripts, and nothing that Prettier decides (layout).
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', 'models/dist/', 'var/', 'test-artifacts/', 'coverage/'] },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Express 5 awaits a handler's promise and routes its rejection to the error handler.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      // `_name` marks a deliberately unused binding (destructuring a field away, a required parameter).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // An async function that awaits nothing is still the right shape where a Promise is expected (an Express
      // handler, an admin Command, a close()): `async` turns a throw into a rejection the caller handles.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // The process harness in dev/harness/ hands the same untyped response bodies to the tests and benchmarks.
    files: ['test/**/*.ts', 'dev/harness/**/*.ts'],
    rules: {
      // chai's property assertions (`expect(x).to.be.empty`) are expressions by design.
      '@typescript-eslint/no-unused-expressions': 'off',
      // Response bodies are untyped JSON (fetch's json() is `any`) and each test reads the fields it checks;
      // the contract tests validate every body against the OpenAPI document instead (test/support/openapi).
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // …and a helper that hands such a body on says so with `body: any`.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
  },
  prettier,
);
