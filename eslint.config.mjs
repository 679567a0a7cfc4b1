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
  ...sourceLayers(),
);

/**
 * The import rules of src/: the bundle's measured choices for every file, plus the layers (DESIGN.md section 6:
 * cli → steps → engine → cluster/host/siteconfig/…). A lower layer never imports a higher one: the command
 * that runs the agent picks the steps and hands them to the engine, so the engine can be tested with any steps.
 * ESLint applies the last matching config's options for a rule, so each layer's block repeats the bundle rules.
 */
function sourceLayers() {
  const bundlePaths = [
    { name: 'zod', message: "Use 'zod/mini': the full zod drags +264 KiB of locales into the bundle (README, Dependencies)." },
    { name: '@kubernetes/client-node', allowTypeImports: true, message: 'Types only at runtime: client-node costs ~270 KiB in the bundle (README, Dependencies). Use src/cluster/.' },
  ];
  const above = (folders, who) => ({
    regex: `^(\\.\\./)+(${folders.join('|')})(/|$)`,
    message: `${who} is a lower layer than ${folders.join(', ')}: it must not import them (cli → steps → engine → cluster/host/siteconfig/…).`,
  });
  const lower = ['cluster', 'host', 'siteconfig', 'certs', 'csr'];
  const layers = [
    { files: ['src/**/*.ts'], patterns: [] },
    { files: ['src/steps/**/*.ts'], patterns: [above(['cli', 'factory', 'render'], 'steps/')] },
    { files: ['src/engine/**/*.ts'], patterns: [above(['cli', 'steps', 'factory', 'render'], 'engine/')] },
    ...lower.map((dir) => ({ files: [`src/${dir}/**/*.ts`], patterns: [above(['cli', 'steps', 'engine', 'factory', 'render'], `${dir}/`)] })),
  ];
  return layers.map(({ files, patterns }) => ({
    files,
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: bundlePaths, ...(patterns.length ? { patterns } : {}) }] },
  }));
}
