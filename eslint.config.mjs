// Lint rules that protect the design's measured choices (README: Layout, Dependencies):
// the bundle must stay small, so the node code never imports all of zod or client-node at runtime; and the
// node's files are reached only through the host seam.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const BUNDLE_BUDGET = [
  { name: 'zod', message: "Use 'zod/mini': the full zod drags +264 KiB of locales into the bundle (README, Dependencies)." },
  { name: '@kubernetes/client-node', allowTypeImports: true, message: 'Types only at runtime: client-node costs ~270 KiB in the bundle (README, Dependencies). Use src/cluster/.' },
];

// The node bundle leaves out yaml's YAML 1.1 types (esbuild.config.mjs, yaml11StandIn); src/util/yaml.ts is the
// parse that never reaches them. The workstation bundle keeps them (src/workstation/ parses as it likes).
const YAML_PARSE = {
  name: 'yaml',
  importNames: ['parse', 'parseDocument', 'parseAllDocuments'],
  message: "Parse YAML with src/util/yaml.ts (parseYamlCore, parseAllYamlCore): the node bundle has no YAML 1.1 types (esbuild.config.mjs).",
};
const YAML_PARSE_ALLOWED = ['src/util/yaml.ts', 'src/workstation/**/*.ts'];

// The node bundle leaves out yaml's stringify code too (esbuild.config.mjs, stringifyStandIn): the node code
// writes YAML with src/util/yaml.ts's emitYaml. Only files the workstation bundle alone holds may use yaml's
// (esbuild.config.mjs, workstationOptions: src/workstation/, `render machineconfig`).
const YAML_WRITE = {
  name: 'yaml',
  importNames: ['stringify', 'Document'],
  allowTypeImports: true,
  message: 'Write YAML with emitYaml (src/util/yaml.ts): the node bundle has no yaml stringify (esbuild.config.mjs, stringifyStandIn).',
};
const YAML_WRITE_ALLOWED = ['src/workstation/**/*.ts', 'src/render/machineconfig.ts'];

// Every node file goes through the Host (src/host/host.ts), so the same code works under --root, in the podman
// runtime's chroot and in tests; a direct node:fs read would escape the host root.
const NODE_FS = ['node:fs', 'fs', 'node:fs/promises', 'fs/promises'].map((name) => ({
  name,
  message: 'Read and write node files through the Host (ctx.host / src/host/host.ts); add a Host verb if one is missing.',
}));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'build/**', '.cache/**', '.stryker-tmp/**', 'reports/**'] },
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
  ...sourceImportRules(),
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

/**
 * The import rules of src/, per file: the bundle budget everywhere; node:fs only in the host seam and the
 * files listed in FS_ALLOWED; and the layers (cli → steps → engine → cluster/host/siteconfig/…): a lower
 * layer never imports a higher one — the command that runs the agent picks the steps and hands them to the
 * engine, so the engine runs (and is tested) with any steps. ESLint takes a rule's options from the last
 * matching config, so every block carries the whole set for its files.
 */
function sourceImportRules() {
  const above = (folders, who) => ({
    regex: `^(\\.\\./)+(${folders.join('|')})(/|$)`,
    message: `${who} is a lower layer than ${folders.join(', ')}: it must not import them (cli → steps → engine → cluster/host/siteconfig/…).`,
  });
  const lowerThanEngine = ['cli', 'steps', 'engine', 'factory', 'render'];
  const LAYERS = [
    { dir: '', patterns: [] },
    { dir: 'steps', patterns: [above(['cli', 'factory', 'render'], 'steps/')] },
    { dir: 'engine', patterns: [above(['cli', 'steps', 'factory', 'render'], 'engine/')] },
    // src/network/ (topology, uplink decisions, known-good profiles, the early phase) sits beside siteconfig: below
    // the engine and the steps, above the host seam.
    ...['cluster', 'host', 'siteconfig', 'certs', 'csr', 'network'].map((dir) => ({ dir, patterns: [above(lowerThanEngine, `${dir}/`)] })),
  ];
  // Where node:fs is allowed: the host seam itself, and files that never touch a node file.
  const FS_ALLOWED = [
    'src/host/**/*.ts',
    // The site-config reader: a path on this machine, not under --root (the operator's own files for
    // `validate` on a workstation, the agent's snapshot copy on the node); its realpath/O_NOFOLLOW
    // confinement needs file descriptors the Host does not hand out.
    'src/siteconfig/files.ts',
    // The logger writes to the process's own stdout/stderr descriptors.
    'src/log.ts',
    // `validate IMAGE` on a workstation: reads the operator's image file and copies its files out into a
    // private temporary directory of this machine (never a node path).
    'src/siteconfig/image.ts',
  ];
  const rule = (patterns, fs = false, yamlParse = false, yamlWrite = false) => ({
    '@typescript-eslint/no-restricted-imports': ['error', { paths: [...BUNDLE_BUDGET, ...(fs ? [] : NODE_FS), ...(yamlParse ? [] : [YAML_PARSE]), ...(yamlWrite ? [] : [YAML_WRITE])], ...(patterns.length ? { patterns } : {}) }],
  });
  const layerOf = (file) => LAYERS.filter((l) => l.dir && file.startsWith(`src/${l.dir}/`)).at(-1) ?? LAYERS[0];
  // Each exception names its files exactly as the lists spell them; one block per such entry carries all of its exceptions.
  const excepted = [...new Set([...FS_ALLOWED, ...YAML_PARSE_ALLOWED, ...YAML_WRITE_ALLOWED])];
  return [
    ...LAYERS.map(({ dir, patterns }) => ({ files: [dir ? `src/${dir}/**/*.ts` : 'src/**/*.ts'], rules: rule(patterns) })),
    ...excepted.map((file) => ({ files: [file], rules: rule(layerOf(file).patterns, FS_ALLOWED.includes(file), YAML_PARSE_ALLOWED.includes(file), YAML_WRITE_ALLOWED.includes(file)) })),
  ];
}
