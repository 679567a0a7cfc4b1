// Bundles the agent into the single file the node needs: dist/sno-reconfigure.cjs (DESIGN.md section 3).
// CJS because ESM bundles need a createRequire banner and SEA wants CJS (runtime-libs.md section 1).
// Budget: what the MachineConfig carries for it <= 200 KiB (DESIGN.md section 6; base64 of the brotli payload and
// its loader, src/render/payload.ts); test/integration/delivery/bundle-size.test.ts enforces it, `npm run bench`
// (or `npm run bench:bundle` alone) reports it beside base64(gzip(bundle)).
import { build } from 'esbuild';
import * as path from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

/**
 * yaml's YAML 1.1 types (binary, omap, pairs, set, timestamp and the 1.1 schema) replaced by tags that refuse, in
 * the node bundle only: yaml reaches them through schema 'yaml-1.1' (an option, or a %YAML 1.1 directive when
 * no schema is given) or resolveKnownTags, and the agent parses only through src/util/yaml.ts, which pins
 * both (eslint.config.mjs enforces that). -8 KB raw, -2.6 KiB in the MachineConfig (npm run bench:bundle,
 * 2026-11-26). yaml-1.1/merge.js stays: the core code imports it for `<<` keys. If a refusing tag were ever
 * reached, the document gets an error naming the tag rather than a silently different value.
 */
const YAML11_DROPPED = /^\.\/yaml-1\.1\/(binary|omap|pairs|schema|set|timestamp)\.js$/;
const YAML11_STAND_IN = `
const refuse = (tag) => ({ tag, default: true, test: /[\\s\\S]*/, identify: () => false,
  resolve: (_value, onError) => onError(tag + ': a YAML 1.1 type, which sno-reconfigure does not read') });
export const binary = refuse('tag:yaml.org,2002:binary');
export const omap = refuse('tag:yaml.org,2002:omap');
export const pairs = refuse('tag:yaml.org,2002:pairs');
export const set = refuse('tag:yaml.org,2002:set');
export const timestamp = refuse('tag:yaml.org,2002:timestamp');
export const intTime = refuse('tag:yaml.org,2002:int');
export const floatTime = refuse('tag:yaml.org,2002:float');
export const schema = [timestamp];
`;
export const yaml11StandIn = {
  name: 'yaml-1.1-stand-in',
  setup(b) {
    b.onResolve({ filter: YAML11_DROPPED }, (args) => (/[\\/]yaml[\\/]browser[\\/]dist[\\/]schema[\\/]tags\.js$/.test(args.importer) ? { path: 'types.js', namespace: 'yaml-1.1-stand-in' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'yaml-1.1-stand-in' }, () => ({ contents: YAML11_STAND_IN, loader: 'js' }));
  },
};

/**
 * yaml's stringify modules (browser/dist/stringify/*.js) replaced by functions that throw, in the node bundle only:
 * the node code writes YAML with src/util/yaml.ts's emitYaml, and eslint.config.mjs keeps yaml's stringify and
 * Document out of it. Parsing reaches them in one place, a list, mapping or alias as a mapping key converted to a
 * plain object (nodes/addPairToJSMap.js, stringifyKey); src/util/yaml.ts refuses such a key before any conversion,
 * so a document with one gets the same located error from the bundle as from the sources. -11.5 KiB raw (475.0 ->
 * 463.5), -5.2 KiB in the MachineConfig (181.7 -> 176.5 KiB: base64 of the brotli payload 180.8 -> 175.6, loader
 * 0.9; npx tsx test/bench/bundle-report.ts, 2026-11-26). If a stand-in were ever reached, it throws a sentence
 * saying so rather than writing something else.
 */
const STRINGIFY_MODULES = ['stringify', 'stringifyCollection', 'stringifyComment', 'stringifyDocument', 'stringifyNumber', 'stringifyPair', 'stringifyString', 'foldFlowLines'];
const STRINGIFY_MODULE = new RegExp(`(^|/)(${STRINGIFY_MODULES.join('|')})\\.js$`);
const STRINGIFY_STAND_IN = `
const refuse = () => { throw new Error('the node bundle does not write YAML with the yaml package (src/util/yaml.ts emitYaml does; esbuild.config.mjs, stringifyStandIn)'); };
export { refuse as createStringifyContext, refuse as stringify, refuse as stringifyCollection, refuse as stringifyComment, refuse as indentComment,
  refuse as lineComment, refuse as stringifyDocument, refuse as stringifyNumber, refuse as stringifyPair, refuse as stringifyString, refuse as foldFlowLines };
export const FOLD_BLOCK = 'block', FOLD_FLOW = 'flow', FOLD_QUOTED = 'quoted';
`;
export const stringifyStandIn = {
  name: 'yaml-stringify-stand-in',
  setup(b) {
    b.onResolve({ filter: STRINGIFY_MODULE }, (args) => {
      const dir = path.dirname(path.resolve(args.resolveDir, args.path));
      return dir.endsWith(path.join('node_modules', 'yaml', 'browser', 'dist', 'stringify')) ? { path: 'stringify.js', namespace: 'yaml-stringify-stand-in' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'yaml-stringify-stand-in' }, () => ({ contents: STRINGIFY_STAND_IN, loader: 'js' }));
  },
};

/**
 * yaml's code for building documents from values (doc/createNode.js, doc/anchors.js), for revivers
 * (doc/applyReviver.js) and its JSON schema (schema/json/schema.js), replaced by functions that throw, in the node
 * bundle only: the node code only parses (src/util/yaml.ts, schema 'core', no reviver) and never builds a Document
 * from values or sets a path in one (eslint.config.mjs keeps Document out of the node code; createNode and the
 * anchors are reached only from Document's constructor with a value, createNode, createAlias, createPair, setIn
 * and addIn, YAMLMap.from and YAMLSeq.from, and Alias's toString, which is stringify). -3.4 KB raw, -1.3 KiB in the
 * MachineConfig (200.3 -> 199.0 KiB; npm run bench:bundle, 2026-11-27). If a stand-in were ever reached, it
 * throws a sentence saying so rather than building something else.
 */
const BUILD_MODULE = /(^|\/)(createNode|anchors|applyReviver|schema)\.js$/;
const BUILD_FILES = ['doc/createNode.js', 'doc/anchors.js', 'doc/applyReviver.js', 'schema/json/schema.js'].map((f) => path.join('node_modules', 'yaml', 'browser', 'dist', f));
const BUILD_STAND_IN = `
const refuse = () => { throw new Error('the node bundle does not build YAML documents from values (esbuild.config.mjs, yamlBuildStandIn)'); };
export { refuse as createNode, refuse as anchorIsValid, refuse as anchorNames, refuse as createNodeAnchors, refuse as findNewAnchor, refuse as applyReviver };
export const schema = [];
`;
export const yamlBuildStandIn = {
  name: 'yaml-build-stand-in',
  setup(b) {
    b.onResolve({ filter: BUILD_MODULE }, (args) => {
      const file = path.resolve(args.resolveDir, args.path);
      return BUILD_FILES.some((f) => file.endsWith(path.sep + f)) ? { path: 'build.js', namespace: 'yaml-build-stand-in' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'yaml-build-stand-in' }, () => ({ contents: BUILD_STAND_IN, loader: 'js' }));
  },
};

export const bundleOptions = {
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/sno-reconfigure.cjs',
  bundle: true,
  platform: 'node',
  // The oldest Node the agent is supported on (src/factory/preflight.ts MIN_NODE_MAJOR; the RPM requires it too). The
  // output is byte for byte the one of node20 and node24 today (esbuild 0.28.2, 2026-11-27): the target only says
  // what esbuild may leave unlowered.
  target: 'node22',
  // import() becomes require() wrapped in a promise, builtins included: the MachineConfig's loader runs the bundle
  // through vm.Script (src/render/payload.ts), where a native import() throws ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING
  // (no importModuleDynamically callback), and the lazily loaded parts of the agent (issue 39) use import().
  supported: { 'dynamic-import': false },
  format: 'cjs',
  minify: true,
  legalComments: 'none',
  banner: { js: '#!/usr/bin/env node' },
  // yaml's ESM build (its "default" export condition) tree-shakes; the CJS one under "node" does not (-7 KB). Found the
  // way Node finds packages: Stryker's sandbox (npm run mutation) runs this build before it links node_modules in.
  alias: { yaml: path.join(path.dirname(createRequire(import.meta.url).resolve('yaml/package.json')), 'browser', 'index.js') },
  logLevel: 'warning',
  metafile: true,
  plugins: [yaml11StandIn, stringifyStandIn, yamlBuildStandIn],
};

/**
 * dist/sno-reconfigure-workstation.cjs: every command of the node bundle plus `media build` (src/workstation/),
 * which a workstation needs and a node does not; the node bundle hands `media build` to it when it is beside it.
 */
// Workstations and the dev machines (Debian 12's Node 20) run it: its target stays node20.
export const workstationOptions = { ...bundleOptions, target: 'node20', entryPoints: ['src/cli/workstation-main.ts'], outfile: 'dist/sno-reconfigure-workstation.cjs', plugins: [] };

/**
 * terser's pass over the node bundle esbuild wrote: names chosen over the whole file at once, which brotli packs tighter
 * than esbuild's own names: -5.0 KB in the MachineConfig (204,668 -> 199,612 bytes carried; npm run bench:bundle,
 * 2026-11-27); and since 2026-11-28 two compress passes over the file as one top level (`toplevel`: top-level code
 * nothing reaches goes, top-level constants are inlined; no property renamed, none of terser's unsafe transforms):
 * -1.6 KB more (205,376 -> 203,756 bytes carried), 4.4 s of build instead of 1.8 s. On 2026-11-28 (stop 53), of two to
 * five passes, simple or all functions inlined, statements joined into comma sequences or not (twenty builds, each
 * payload at its best block size), four passes, simple functions only, without sequences packed smallest: -136 bytes
 * carried against three passes, the best of the same grid two hours earlier; which setting wins moves with the code,
 * by ±0.2 KiB, like brotli's block size (src/render/payload.ts). About 6 s. The whole test suite runs this bundle.
 */
export async function renameForSize(file) {
  const { minify } = await import('terser');
  const { code } = await minify(await readFile(file, 'utf8'), { compress: { passes: 4, toplevel: true, inline: 1, sequences: false }, mangle: { toplevel: true }, format: { comments: false, shebang: true } });
  await writeFile(file, code);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await build(workstationOptions);
  const result = await build(bundleOptions);
  await renameForSize(bundleOptions.outfile);
  const out = result.metafile.outputs[bundleOptions.outfile];
  if (process.env.SNO_BUILD_VERBOSE) console.log(`${bundleOptions.outfile}: ${out.bytes} bytes`);
}
