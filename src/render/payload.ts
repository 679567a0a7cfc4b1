// The agent as the MachineConfig carries it. Ignition undoes only gzip (`compression`: "null or gzip",
// coreos/ignition docs/configuration-v3_2.md), but Node has brotli built in (zlib.brotliDecompressSync, Node
// 11.7+), and brotli -11 of the bundle is 28 KiB smaller in base64 than gzip -9 (npm run bench, 2026-11-26).
// So the MachineConfig writes the bundle brotli-compressed to MC_PAYLOAD_PATH, and at MC_BUNDLE_PATH, the
// path every unit, wrapper and launcher runs, a loader of a few lines that decompresses it (about 2 ms) and
// runs it as that file: same process.argv, __filename and require. The RPM installs the bundle itself. The loader
// itself goes gzipped (`compression: gzip`, which the MCO's daemon undoes too: machine-config-operator
// pkg/controller/common/helpers.go DecodeIgnitionFileContents): 1.9 -> 1.0 KiB in the MachineConfig (2026-11-28).
import { brotliCompressSync, constants } from 'node:zlib';
import * as path from 'node:path';
import { MC_PAYLOAD_PATH } from './layout';

/**
 * The encoder's input block sizes tried: 0 is its own choice. Which packs a bundle smallest changes from one build to
 * the next, unpredictably, by up to ~250 bytes of base64 (16…24 and its own, measured on the bundle of 2026-11-28);
 * the decoder needs nothing of it.
 */
const BLOCK_BITS = [0, 16, 17, 18, 19, 20, 21, 22, 23, 24];
let last: { bundle: Buffer; payload: Buffer } | undefined;

/** Brotli at its densest (quality 11, 16 MiB window, the best block size); the same input gives the same bytes. */
export function compressBundle(bundle: Buffer): Buffer {
  if (last?.bundle.equals(bundle)) return last.payload;
  const payloads = BLOCK_BITS.map((bits) =>
    brotliCompressSync(bundle, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_LGWIN]: constants.BROTLI_MAX_WINDOW_BITS,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: bundle.length,
        ...(bits === 0 ? {} : { [constants.BROTLI_PARAM_LGBLOCK]: bits }),
      },
    }),
  );
  // The first of the smallest: the same bundle, the same payload.
  last = { bundle, payload: payloads.reduce((best, p) => (p.length < best.length ? p : best)) };
  return last.payload;
}

/** Beside the loader: V8's code cache of the agent (issue 39), written by the loader itself. */
export const CODE_CACHE_SUFFIX = '.v8-cache';
/**
 * A start without a cache writes one when it has run this long: the service (waiting for media, or at work) has
 * compiled what it runs by then. A short command (`--version`, a quick `status`) has exited before and never pays
 * for writing it; it reads the one the service wrote.
 */
export const CODE_CACHE_AFTER_MS = 2_000;

/**
 * The loader at MC_BUNDLE_PATH. It finds the payload beside itself (`__filename + '.br'`), so it works where
 * the podman launcher mounts the host's / at /host as well. The bundle runs in this module with the CommonJS
 * wrapper's parameters, as Node's own loader would have run it from this path; its `#!` line becomes a comment.
 * A missing or damaged payload is a sentence.
 *
 * V8's code cache (vm.Script cachedData; nodejs.org/api/vm.html "script.createCachedData()") skips compiling at every
 * start after the first. It lives beside the payload, and its first line names what it was made from: the payload's
 * sha256, Node's version and the CPU. A cache from another payload or Node, or one V8 refuses (damaged:
 * `cachedDataRejected`), is not used and is written anew by the next start that lives CODE_CACHE_AFTER_MS; any error
 * reading or writing it is ignored — the agent never needs it. Written atomically (a temporary name, then rename),
 * readable by root alone.
 */
export function renderLoader(): string {
  const payload = path.posix.basename(MC_PAYLOAD_PATH);
  return [
    '#!/usr/bin/env node',
    `// sno-reconfigure: runs the agent, ${payload} beside this file (brotli: smaller in the MachineConfig), with V8's code cache beside it.`,
    "'use strict';",
    "const fs = require('fs');",
    'let packed, source;',
    'try {',
    "  packed = fs.readFileSync(__filename + '.br');",
    "  source = require('zlib').brotliDecompressSync(packed).toString();",
    '} catch (e) {',
    "  process.stderr.write(`sno-reconfigure cannot start: ${__filename}.br, the agent itself, is missing or damaged (${e.code || e.message}). " +
      'The sno-reconfigure MachineConfig installs it: call the office.\\n`);',
    '  process.exit(1);',
    '}',
    `const cacheFile = __filename + '${CODE_CACHE_SUFFIX}';`,
    "const tag = Buffer.from(`${require('crypto').createHash('sha256').update(packed).digest('hex')} ${process.version} ${process.arch}\\n`);",
    'let cached;',
    'try {',
    '  const c = fs.readFileSync(cacheFile);',
    '  if (c.subarray(0, tag.length).equals(tag)) cached = c.subarray(tag.length);',
    '} catch {}',
    "const script = new (require('vm').Script)('(function (exports, require, module, __filename, __dirname) {' + source.replace(/^#!/, '//') + '\\n})', { filename: __filename, cachedData: cached });",
    'if (cached === undefined || script.cachedDataRejected) {',
    '  setTimeout(() => {',
    '    try {',
    '      const tmp = `${cacheFile}.${process.pid}`;',
    '      fs.writeFileSync(tmp, Buffer.concat([tag, script.createCachedData()]), { mode: 0o600 });',
    '      fs.renameSync(tmp, cacheFile);',
    '    } catch {}',
    `  }, ${CODE_CACHE_AFTER_MS}).unref();`,
    '}',
    'script.runInThisContext()(exports, require, module, __filename, __dirname);',
    '',
  ].join('\n');
}
