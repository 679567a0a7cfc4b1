// What a start of the node bundle evaluates (issue 39): `--version` and `--help` only the command table, and a
// `run` waiting for media (on a node shipped without media, for weeks) only detection, the journal, the banner and
// status — not the site-config code, the steps, the cluster client or node:crypto (2 MiB of memory by itself),
// which load when media appear. Read from esbuild's metafile: the modules each entry reaches by static imports
// (esbuild initialises what only import() reaches on first use, inside the one file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { build, type Metafile } from 'esbuild';
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

const WAITING_AGENT_NEVER = [/^src\/siteconfig\/(load|schema|file-validation|parse-text|nmstate|seed-reconfiguration)\.ts$/, /^src\/steps\//, /^src\/cluster\/(client|http)\.ts$/, /^src\/csr\//, /^node_modules\/(yaml|zod)\//, /^node:crypto$/];

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
