// Lint rules that protect the design's measured choices (DESIGN.md section 6, reference/runtime-libs.md):
// the bundle must stay small, so the node code never imports all of zod or client-node at runtime.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'build/**', '.cache/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', URL: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', TextDecoder: 'readonly', TextEncoder: 'readonly', setImmediate: 'readonly', queueMicrotask: 'readonly', structuredClone: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'no-console': 'off',
      eqeqeq: ['error', 'always'],
    },
  },
  {
    // Stand-in host tools are plain CommonJS scripts run by node as executables.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', __filename: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [
          { name: 'zod', message: "Use 'zod/mini': the full zod drags +264 KiB of locales into the bundle (runtime-libs.md)." },
          { name: '@kubernetes/client-node', allowTypeImports: true, message: 'Types only at runtime: client-node costs ~270 KiB in the bundle (runtime-libs.md). Use src/cluster/.' },
        ],
      }],
    },
  },
  {
    // An API answer is asked through the predicates beside ApiError (src/cluster/types.ts: isNotFound,
    // isConflict, isGone), as apimachinery's errors.IsNotFound; only the client itself reads status codes.
    files: ['src/**/*.ts'],
    ignores: ['src/cluster/**'],
    rules: {
      'no-restricted-syntax': ['error', {
        selector: "BinaryExpression:matches([left.property.name='statusCode'][right.type='Literal'], [right.property.name='statusCode'][left.type='Literal'])",
        message: 'Ask the API error with isNotFound/isConflict/isGone (src/cluster/types.ts) instead of comparing statusCode.',
      }],
    },
  },
);
