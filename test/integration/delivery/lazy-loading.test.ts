// What a start of the node bundle evaluates (issue 39): `--version` and `--help` only the command table, and a
// `run` waiting for media (on a node shipped without media, for weeks) only detection, the journal, the banner and
// status — not the site-config code, the steps, the cluster client or node:crypto (2 MiB of memory by itself),
// which load when media appear. Read from esbuild's metafile: the modules each entry reaches by static imports
// (esbuild initialises what only import() reaches on first use, inside the one file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { build, type Metafile } from 'esbuild';
import { compressBundle, renderLoader } from '../../../src/render/payload';
import { ensureBundle, PROJECT_ROOT } from '../../support/bundle';
// @ts-expect-error -- the build script is plain JavaScript (esbuild.config.mjs)
import { bundleOptions } from '../../../esbuild.config.mjs';

async function metafile(): Promise<Metafile> {
  const result = await build({ ...(bundleOptions as object), write: false, metafile: true });
  return result.metafile!;
}

/** Every module (and node: builtin) reached from `entry` by static imports. */
function staticallyReached(meta: Metafile, entry: string): Set<string> {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const i of meta.inputs[file]?.imports ?? []) if (i.kind !== 'dynamic-import') queue.push(i.path);
  }
  return seen;
}

const WAITING_AGENT_NEVER = [/^src\/siteconfig\/(load|schema|file-validation|parse-text|nmstate|seed-reconfiguration)\.ts$/, /^src\/siteconfig\/validation\//, /^src\/steps\//, /^src\/cluster\/(client|http)\.ts$/, /^src\/csr\//, /^node_modules\/(yaml|zod)\//, /^node:crypto$/];

test('--version and --help evaluate the command table, no command', async () => {
  const meta = await metafile();
  const reached = [...staticallyReached(meta, 'src/cli/main.ts')].filter((f) => f.startsWith('src/'));
  const commands = reached.filter((f) => f.startsWith('src/cli/commands/'));
  assert.deepEqual(commands.sort(), ['src/cli/commands/index.ts', 'src/cli/commands/summaries.ts', 'src/cli/commands/workstation.ts']);
  const bytes = reached.reduce((sum, f) => sum + (meta.inputs[f]?.bytes ?? 0), 0);
  assert.ok(bytes < 40_000, `the eager part of the bundle stays small (${bytes} bytes of source)`);
});

test('a waiting `run` evaluates neither the site-config code, the steps, the cluster client, nor node:crypto', async () => {
  const meta = await metafile();
  const reached = [...staticallyReached(meta, 'src/cli/commands/run.ts')];
  const loadedTooEarly = reached.filter((f) => WAITING_AGENT_NEVER.some((re) => re.test(f)));
  assert.deepEqual(loadedTooEarly, []);
  // ...and they are still in the one file, for when media appear.
  const all = Object.keys(meta.inputs);
  for (const re of WAITING_AGENT_NEVER.slice(0, 5)) assert.ok(all.some((f) => re.test(f)), `${re} is in the bundle`);
});

// The MachineConfig runs the bundle through its loader's vm.Script, where a native import() throws
// ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING (no importModuleDynamically callback): every lazily loaded part must be a
// require() in the bundle. Seen on the testbed: `run` failed at its first look at the media.
test('the bundle holds no native import(), and its lazily loaded commands run through the MachineConfig\'s loader', () => {
  const bundle = readFileSync(ensureBundle());
  assert.equal(/\bimport\(/.test(bundle.toString()), false, 'a native import() is left in dist/sno-reconfigure.cjs');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sno-lazy-'));
  try {
    const loader = path.join(dir, 'sno-reconfigure.cjs');
    writeFileSync(loader, renderLoader());
    writeFileSync(`${loader}.br`, compressBundle(bundle));
    const example = path.join(PROJECT_ROOT, 'examples', 'signed-vlan-store');
    const validate = spawnSync(process.execPath, [loader, 'validate', example, '--trusted-key', path.join(PROJECT_ROOT, 'examples', 'signing-key', 'EXAMPLE-site-signing.pub.pem'), '--json'], { encoding: 'utf8' });
    assert.equal(validate.stderr, '');
    assert.equal((JSON.parse(validate.stdout) as { valid: boolean }).valid, true, validate.stdout);
    const help = spawnSync(process.execPath, [loader, 'status', '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^Usage: sno-reconfigure status/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
