// What the tests of the node bundle's yaml stand-ins (esbuild.config.mjs: yaml11StandIn, stringifyStandIn,
// yamlBuildStandIn) share: the bundle with its metafile and a scratch folder for a describe(), and a probe run through
// yaml as the node bundle builds it.
import { before, after } from 'node:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BuildOptions, Metafile } from 'esbuild';
import { buildBundleInMemory, ensureBundle, PROJECT_ROOT } from './bundle';

export interface BundleScratch {
  bundle: string;
  metafile: Metafile;
  dir: string;
}

/** Inside a describe(): the node bundle (built if missing), its metafile, and a scratch folder removed afterwards. */
export function bundleWithScratch(prefix: string): BundleScratch {
  const ctx = {} as BundleScratch;
  before(async () => {
    ctx.bundle = ensureBundle();
    ctx.metafile = (await buildBundleInMemory()).result.metafile;
    ctx.dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  after(() => rmSync(ctx.dir, { recursive: true, force: true }));
  return ctx;
}

/** `probe` (a module that imports yaml and prints) bundled with the node bundle's options and run: its status and output. */
export async function runBundledProbe(probe: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const { bundleOptions } = (await import(path.join(PROJECT_ROOT, 'esbuild.config.mjs'))) as { bundleOptions: BuildOptions };
  const { build } = await import('esbuild');
  const result = await build({ ...bundleOptions, entryPoints: undefined, outfile: undefined, banner: undefined, stdin: { contents: probe, resolveDir: PROJECT_ROOT, sourcefile: 'probe.mjs' }, write: false, metafile: false, logLevel: 'silent' });
  const run = spawnSync(process.execPath, ['-'], { input: result.outputFiles![0]!.text, encoding: 'utf8' });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}
