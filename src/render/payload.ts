// The agent as the MachineConfig carries it. Ignition undoes only gzip (`compression`: "null or gzip",
// coreos/ignition docs/configuration-v3_2.md), but Node has brotli built in (zlib.brotliDecompressSync, Node
// 11.7+), and brotli -11 of the bundle is 28 KiB smaller in base64 than gzip -9 (npm run bench, 2026-11-26).
// So the MachineConfig writes the bundle brotli-compressed to MC_PAYLOAD_PATH, and at MC_BUNDLE_PATH, the
// path every unit, wrapper and launcher runs, a loader of a few lines that decompresses it (about 2 ms) and
// runs it as that file: same process.argv, __filename and require. The RPM installs the bundle itself.
import { brotliCompressSync, constants } from 'node:zlib';
import * as path from 'node:path';
import { MC_PAYLOAD_PATH } from './layout';

/** Brotli at its densest (quality 11, 16 MiB window); the same input gives the same bytes. */
export function compressBundle(bundle: Buffer): Buffer {
  return brotliCompressSync(bundle, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_LGWIN]: constants.BROTLI_MAX_WINDOW_BITS,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: bundle.length,
    },
  });
}

/**
 * The loader at MC_BUNDLE_PATH. It finds the payload beside itself (`__filename + '.br'`), so it works where
 * the podman launcher mounts the host's / at /host as well. vm.compileFunction with the CommonJS wrapper's
 * parameters runs the bundle in this module, as Node's own loader would have run it from this path; the
 * bundle's `#!` line is allowed there (V8 hashbang grammar). A missing or damaged payload is a sentence.
 */
export function renderLoader(): string {
  const payload = path.posix.basename(MC_PAYLOAD_PATH);
  return [
    '#!/usr/bin/env node',
    `// sno-reconfigure: runs the agent, ${payload} beside this file (brotli: smaller in the MachineConfig).`,
    "'use strict';",
    'let source;',
    'try {',
    "  source = require('zlib').brotliDecompressSync(require('fs').readFileSync(__filename + '.br')).toString();",
    '} catch (e) {',
    "  process.stderr.write(`sno-reconfigure cannot start: ${__filename}.br, the agent itself, is missing or damaged (${e.code || e.message}). " +
      'The sno-reconfigure MachineConfig installs it: call the office.\\n`);',
    '  process.exit(1);',
    '}',
    "require('vm').compileFunction(source, ['exports', 'require', 'module', '__filename', '__dirname'], { filename: __filename })(exports, require, module, __filename, __dirname);",
    '',
  ].join('\n');
}
