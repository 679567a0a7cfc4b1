// The test files, compiled before they run (issue 37: npm test's time). Run through the tsx loader, every test file's
// process starts tsx's loader thread and sends each of its modules through it: about 0.5 s of CPU for a unit test
// file and 2–3 s for one that loads the simulator (measured 2026-11-27: run-ntp.test.ts 22.6 s of CPU through tsx,
// 20.0 s compiled; policy.test.ts 3.8 s and 3.3 s), some 250 s of the suite's 1,750. esbuild (the compiler tsx
// itself uses) bundles each test file once with its local imports into .cache/tests/run-<pid>/, packages left as imports,
// in one build for all files, shared code in shared chunks, packages resolved from the project's node_modules.
//
// What would differ from running the sources, and how it is kept the same:
// - import.meta.url, .dirname and .filename would name the bundle: each source's own are written into it as text,
//   so fixtures, PROJECT_ROOT and createRequire() resolve from where the source is, as under tsx.
// - Stack traces would point into the bundles: the runner passes --enable-source-maps, and test-timeout.mjs
//   records each test's place in its source file; the reporter names files by their sources.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Each run compiles into a folder of its own (a test may run the runner beside the suite): `run-<its pid>`. */
const COMPILED_TESTS = join(PROJECT_ROOT, '.cache', 'tests');
const RUN_FOLDER = /^run-(\d+)$/;
/** Each compiled file's first folder is its place in the run's order (`0000`, `0001`…): Node 20's runner starts the
 *  files it is given in the order of their paths, whatever order they are given in. */
const PLACE = /^\d{4}$/;

/** A compiled file (`.cache/tests/run-N/<its place>/<absolute source path>.mjs`) → its source; anything else as it is. */
export function sourceOfCompiled(file) {
  const rel = relative(COMPILED_TESTS, file).split(sep);
  return rel.length > 2 && RUN_FOLDER.test(rel[0]) && PLACE.test(rel[1]) ? sep + rel.slice(2).join(sep).replace(/\.mjs$/, '.ts') : file;
}

/** The folders of runs whose process is gone (killed before they could remove theirs). */
function removeAbandonedRuns() {
  let names = [];
  try {
    names = readdirSync(COMPILED_TESTS);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(RUN_FOLDER.exec(name)?.[1]);
    if (!pid) continue;
    try {
      process.kill(pid, 0);
    } catch (e) {
      if (e.code === 'ESRCH') rmSync(join(COMPILED_TESTS, name), { recursive: true, force: true });
    }
  }
}

/** Each source's own import.meta, as esbuild's `define` puts it: in expressions only, never inside a string. */
function ownImportMeta(transform) {
  const tsconfigRaw = readFileSync(join(PROJECT_ROOT, 'tsconfig.json'), 'utf8');
  return {
    name: 'own-import-meta',
    setup(build) {
      // The project's JavaScript too: a test imports esbuild.config.mjs, which finds its files from its import.meta.url.
      build.onLoad({ filter: /\.([cm]?ts|[cm]?js)$/ }, async ({ path }) => {
        const text = await readFile(path, 'utf8');
        const loader = /ts$/.test(path) ? 'ts' : 'js';
        if (!text.includes('import.meta')) return { contents: text, loader };
        const define = { 'import.meta.url': JSON.stringify(pathToFileURL(path).href), 'import.meta.dirname': JSON.stringify(dirname(path)), 'import.meta.filename': JSON.stringify(path) };
        const { code } = await transform(text, { loader, define, tsconfigRaw, sourcefile: path, sourcemap: 'inline' });
        return { contents: code, loader: 'js' };
      });
    },
  };
}

/**
 * `<place>/<absolute source path without .ts>` (sourceOfCompiled reads it back): a test file may be outside the
 * project (test-timeout.test.ts runs the runner on one in a temp folder).
 */
function compiledName(file, index) {
  return join(String(index).padStart(4, '0'), resolve(file).replace(/\.ts$/, ''));
}

/**
 * Compiles `files` (paths of .test.ts files, anywhere) into this run's folder: returns the compiled file of each, in
 * the same order, the run's folder, and a function that removes it.
 */
export async function compileTests(files) {
  const { build, transform } = await import('esbuild');
  removeAbandonedRuns();
  const outdir = join(COMPILED_TESTS, `run-${process.pid}`);
  rmSync(outdir, { recursive: true, force: true });
  await build({
    // Each output's path starts with its place in `files`, so the runner starts them in that order.
    entryPoints: files.map((f, i) => ({ in: resolve(f), out: compiledName(f, i) })),
    absWorkingDir: PROJECT_ROOT,
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    // Stack traces need the mappings only; without the sources' text in them the maps load faster.
    sourcesContent: false,
    plugins: [ownImportMeta(transform)],
    logLevel: 'warning',
  });
  return {
    compiled: files.map((f, i) => join(outdir, `${compiledName(f, i)}.mjs`)),
    /** The run's own folder, for what else belongs to this run alone (removed with it). */
    outdir,
    remove: () => rmSync(outdir, { recursive: true, force: true }),
  };
}
