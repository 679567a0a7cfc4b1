// The repository stands on its own: nothing it runs, tests, demos or builds reads a path outside it. A clone
// has nothing beside it (least of all the folder of shared material beside the development clone), so
// every tracked file under the folders and build files below (and README.md and docs/, which may point a reader at
// nothing outside the repository) is scanned for a read that leaves the repository:
//
//   sibling-shared   that folder as a sibling (dot-dot, slash, its name), or dot-dot and its name as path-join
//                    arguments
//   shared-reference its reference/ subfolder, by any route (absolute paths too)
//   above-root       PROJECT_ROOT joined with `..`: the project root's parent is outside by definition
//   escaping-relative a relative path that, resolved from the file's own folder, lands above the project root:
//                    module specifiers (`from '…'`, `import('…')`, `require('…')`), `new URL('…',
//                    import.meta.url)`, and path.join/resolve from the file's folder (`__dirname`,
//                    `import.meta.dirname`, `path.dirname(fileURLToPath(import.meta.url))`) with literal parts
//   script-parent    a package.json script with a `../` path: scripts run in the project root
//
// Other relative strings are data, not reads (e.g. the site-config path fuzzer's '../../../etc/shadow', which is
// relative to a USB stick), and are not flagged. This file is left out of the scan: it spells the patterns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROJECT_ROOT } from '../support/bundle';

const SCANNED = ['src', 'test', 'scripts', 'rpm', 'machineconfigs', 'systemd', 'esbuild.config.mjs', 'eslint.config.mjs', 'package.json', 'tsconfig.json', 'README.md', 'docs'];
const THIS_FILE = path.relative(PROJECT_ROOT, fileURLToPath(import.meta.url));

interface OutsideRead {
  file: string;
  line: number;
  rule: string;
  text: string;
}

const FILE_DIR = String.raw`(?:__dirname|import\.meta\.dirname|path\.dirname\(\s*fileURLToPath\(\s*import\.meta\.url\s*\)\s*\))`;
const STRING = String.raw`(['"\`])([^'"\`\n]*)\1`;
const LITERAL_RULES: { rule: string; pattern: RegExp }[] = [
  { rule: 'sibling-shared', pattern: /\.\.[/\\]shared\b|['"`]\.\.['"`]\s*,\s*['"`]shared['"`]/ },
  { rule: 'shared-reference', pattern: /\bshared[/\\]reference\b/ },
  { rule: 'above-root', pattern: /\bPROJECT_ROOT\s*,\s*['"`]\.\.(?:['"`/\\])/ },
];
const SPECIFIERS = [
  new RegExp(String.raw`\bfrom\s+${STRING}`, 'g'),
  new RegExp(String.raw`\b(?:import|require)\(\s*${STRING}\s*\)`, 'g'),
  new RegExp(String.raw`\bnew URL\(\s*${STRING}\s*,\s*import\.meta\.url\s*\)`, 'g'),
];
const FILE_DIR_JOIN = new RegExp(String.raw`\bpath(?:\.posix)?\.(?:join|resolve)\(\s*${FILE_DIR}((?:\s*,\s*(?:'[^'\n]*'|"[^"\n]*"))+)`, 'g');

/** Whether `rel`, resolved from the folder of `file` (relative to the project root), lands outside the project. */
function escapes(file: string, rel: string): boolean {
  if (!rel.startsWith('.')) return false;
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), rel));
  return resolved === '..' || resolved.startsWith('../');
}

/** The reads outside the repository in one file's text (`file` relative to the project root, with '/'). */
function outsideReads(file: string, text: string): OutsideRead[] {
  const found: OutsideRead[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const add = (rule: string) => found.push({ file, line: i + 1, rule, text: line.trim() });
    for (const { rule, pattern } of LITERAL_RULES) if (pattern.test(line)) add(rule);
    const relatives = [...SPECIFIERS.flatMap((re) => [...line.matchAll(re)].map((m) => m[2]))];
    for (const m of line.matchAll(FILE_DIR_JOIN)) relatives.push(path.posix.join(...[...m[1].matchAll(/'([^']*)'|"([^"]*)"/g)].map((p) => p[1] ?? p[2])));
    if (relatives.some((rel) => escapes(file, rel))) add('escaping-relative');
  });
  if (path.posix.basename(file) === 'package.json') {
    const scripts = (JSON.parse(text) as { scripts?: Record<string, string> }).scripts ?? {};
    for (const [name, command] of Object.entries(scripts)) {
      if (/(^|[\s='"])\.\.[/\\]/.test(command)) found.push({ file, line: lines.findIndex((l) => l.includes(`"${name}":`)) + 1, rule: 'script-parent', text: `${name}: ${command}` });
    }
  }
  return found;
}

function trackedFiles(): string[] | undefined {
  try {
    return execFileSync('git', ['ls-files', '-z', '--', ...SCANNED], { cwd: PROJECT_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\0')
      .filter((f) => f !== '' && f !== THIS_FILE);
  } catch {
    return undefined;
  }
}

const tracked = trackedFiles();

test('no tracked file under src, test, scripts, rpm, machineconfigs, systemd, the build files, README.md or docs/ reads outside the repository', { skip: tracked ? false : 'not a git checkout, or git is not installed: nothing tracked to scan' }, () => {
  assert.ok(tracked && tracked.some((f) => f.startsWith('src/')) && tracked.includes('package.json'), 'git ls-files lists the project');
  const found = tracked.flatMap((file) => outsideReads(file, readFileSync(path.join(PROJECT_ROOT, file), 'utf8'))).map((r) => `${r.file}:${r.line}: ${r.rule}: ${r.text}`);
  assert.deepEqual(found, [], `${found.length} line(s) read outside the repository; state the facts they need in the repository, citing their source (as test/sim/schemas/openshift-api/ does):\n${found.join('\n')}`);
});

const read = (file: string, line: string) => outsideReads(file, line).map((r) => r.rule);

// The sample lines are put together from parts, the folder's name never on a line beside a dot-dot, so this file
// itself names no path outside the repository, even to a scanner that reads it line by line.
const FOLDER = 'shared';
const PARENT = '..';
const SIBLING = `${PARENT}/${FOLDER}`;
const REFERENCE = `${FOLDER}/reference`;

test('a path to the shared folder beside the clone is found however it is written', () => {
  assert.deepEqual(read('test/support/bundle.ts', `export const SIBLING_DIR = path.resolve(PROJECT_ROOT, '${PARENT}', '${FOLDER}');`), ['sibling-shared', 'above-root']);
  assert.deepEqual(read('test/sim/crd-schema.ts', `const dir = path.join(root, '${PARENT}/${REFERENCE}/openshift-api-crds');`), ['sibling-shared', 'shared-reference']);
  assert.deepEqual(read('test/x.ts', `const dir = '/work/${REFERENCE}/nmstate-examples';`), ['shared-reference']);
  assert.deepEqual(read('test/x.ts', 'const d = `${root}/' + SIBLING + '`;'), ['sibling-shared']);
});

test('relative paths are flagged only when they climb out of the repository from the file that holds them', () => {
  assert.deepEqual(read('test/unit/engine/media.test.ts', "import { snapshotInto } from '../../../src/siteconfig/media';"), []);
  assert.deepEqual(read('test/unit/engine/media.test.ts', "import { x } from '../../../../elsewhere/x';"), ['escaping-relative']);
  assert.deepEqual(read('test/unit/engine/media.test.ts', "const m = await import('../../../../elsewhere/x.ts');"), ['escaping-relative']);
  assert.deepEqual(read('esbuild.config.mjs', "alias: { yaml: fileURLToPath(new URL('./node_modules/yaml/browser/index.js', import.meta.url)) },"), []);
  assert.deepEqual(read('esbuild.config.mjs', "const crds = fileURLToPath(new URL('../crds', import.meta.url));"), ['escaping-relative']);
  assert.deepEqual(read('rpm/build-rpm.ts', "export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');"), []);
  assert.deepEqual(read('rpm/build-rpm.ts', "const up = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'x');"), ['escaping-relative']);
  assert.deepEqual(read('test/sim/a.ts', "const schemas = path.join(__dirname, '../../../schemas');"), ['escaping-relative']);
  assert.deepEqual(read('test/sim/a.ts', "const schemas = path.join(import.meta.dirname, 'schemas', 'openshift-api');"), []);
});

test('relative strings that are data, not reads from the repository, are not flagged', () => {
  assert.deepEqual(read('test/integration/reliability/fuzz-mutations.ts', "  '../../../../../../etc/shadow',"), []);
  assert.deepEqual(read('src/siteconfig/files.ts', "  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));"), []);
  assert.deepEqual(read('test/e2e/testbed/sno-node.ts', 'symlinkSync(path.posix.relative(path.posix.dirname(KUBELET_PKI), `${SIM_DIR}/state/kubelet/pki`), m.path(KUBELET_PKI));'), []);
  assert.deepEqual(read('src/steps/trust.ts', "// `cluster` spec.additionalTrustedCA. Key format `hostname[..port]` — the port's ':' written as '..'"), []);
});

test('a package.json script that reaches into the parent folder is flagged', () => {
  const pkg = (scripts: Record<string, string>) => JSON.stringify({ name: 'x', scripts }, null, 2);
  assert.deepEqual(outsideReads('package.json', pkg({ demo: 'tsx test/demo/demo.ts', x: 'node scripts/a.mjs ../other' })), [{ file: 'package.json', line: 5, rule: 'script-parent', text: 'x: node scripts/a.mjs ../other' }]);
  assert.deepEqual(outsideReads('package.json', pkg({ build: 'node esbuild.config.mjs' })), []);
});
