// Lint rules that protect the design's measured choices (DESIGN.md section 6, reference/runtime-libs.md):
// the bundle must stay small, so the node code never imports all of zod or client-node at runtime; and the
// node's files are reached only through the host seam.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const BUNDLE_BUDGET = [
  { name: 'zod', message: "Use 'zod/mini': the full zod drags +264 KiB of locales into the bundle (runtime-libs.md)." },
  { name: '@kubernetes/client-node', allowTypeImports: true, message: 'Types only at runtime: client-node costs ~270 KiB in the bundle (runtime-libs.md). Use src/cluster/.' },
];

// Every node file goes through the Host (src/host/host.ts), so the same code works under --root, in the podman
// runtime's chroot and in tests; a direct node:fs read would escape the host root.
const NODE_FS = ['node:fs', 'fs', 'node:fs/promises', 'fs/promises'].map((name) => ({
  name,
  message: 'Read and write node files through the Host (ctx.host / src/host/host.ts); add a Host verb if one is missing.',
}));

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
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: [...BUNDLE_BUDGET, ...NODE_FS] }] },
  },
  {
    // Where node:fs is allowed (issue 13): the host seam itself, and files that never touch a node file.
    files: [
      'src/host/**/*.ts',
      // The site-config reader: a path on this machine, not under --root (the operator's own files for
      // `validate` on a workstation, the agent's snapshot copy on the node); its realpath/O_NOFOLLOW
      // confinement needs file descriptors the Host does not hand out.
      'src/siteconfig/files.ts',
      // The logger writes to the process's own stdout/stderr descriptors.
      'src/log.ts',
      // The cluster client reads the kubeconfig and the certificate files it names; the kubeconfig reads
      // move behind a reader function the callers pass (issue 13, the cluster client's part).
      'src/cluster/kubeconfig.ts',
      'src/cluster/http.ts',
    ],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: BUNDLE_BUDGET }] },
  },
);
