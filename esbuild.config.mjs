// Bundles the agent into the single file the node needs: dist/sno-reconfigure.cjs (DESIGN.md section 3).
// CJS because ESM bundles need a createRequire banner and SEA wants CJS (runtime-libs.md section 1).
// Budget: what the MachineConfig carries for it <= 200 KiB (DESIGN.md section 6; base64 of the brotli payload and
// its loader, src/render/payload.ts); test/integration/delivery/bundle-size.test.ts enforces it, `npm run bench`
// (or `npm run bench:bundle` alone) reports it beside base64(gzip(bundle)).
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

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
  // yaml's ESM build (its "default" export condition) tree-shakes; the CJS one under "node" does not (-7 KB).
  alias: { yaml: fileURLToPath(new URL('./node_modules/yaml/browser/index.js', import.meta.url)) },
  logLevel: 'warning',
  metafile: true,
};

/**
 * dist/sno-reconfigure-workstation.cjs: every command of the node bundle plus `media build` (src/workstation/),
 * which a workstation needs and a node does not; the node bundle hands `media build` to it when it is beside it.
 */
export const workstationOptions = { ...bundleOptions, entryPoints: ['src/cli/workstation-main.ts'], outfile: 'dist/sno-reconfigure-workstation.cjs' };

if (import.meta.url === `file://${process.argv[1]}`) {
  await build(workstationOptions);
  const result = await build(bundleOptions);
  const out = result.metafile.outputs[bundleOptions.outfile];
  if (process.env.SNO_BUILD_VERBOSE) console.log(`${bundleOptions.outfile}: ${out.bytes} bytes`);
}
