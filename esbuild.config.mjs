// Bundles the agent into the single file the node needs: dist/sno-reconfigure.cjs (DESIGN.md section 3).
// CJS because client-side ESM bundles need a createRequire banner and SEA wants CJS (runtime-libs.md section 1).
import { build } from 'esbuild';

export const bundleOptions = {
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/sno-reconfigure.cjs',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: true,
  legalComments: 'none',
  banner: { js: '#!/usr/bin/env node' },
  logLevel: 'warning',
  metafile: true,
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await build(bundleOptions);
  const out = result.metafile.outputs[bundleOptions.outfile];
  if (process.env.SNO_BUILD_VERBOSE) console.log(`${bundleOptions.outfile}: ${out.bytes} bytes`);
}
