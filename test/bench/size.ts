// Size of what goes on the node: the bundle raw, gzip -9 (what `render` embeds: src/cluster/ignition.ts) and
// base64 of that, and the rendered MachineConfig for both runtimes. Budgets from DESIGN.md section 6: the
// MachineConfig is copied into the rendered config and stored in etcd (1.5 MiB per object).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { BUNDLE_PATH, buildBundleInMemory } from '../support/bundle';

export const SIZE_BUDGETS = {
  /** DESIGN.md section 6: ≤ 200 KiB of base64(gzip(bundle)). */
  bundleBase64GzipBytes: 200 * 1024,
  /** DESIGN.md section 6 / the brief: the rendered MachineConfig ≤ 256 KiB. */
  machineConfigBytes: 256 * 1024,
} as const;

/** A digest-pinned image reference for rendering the podman variant (the digest only has to be well formed). */
const SAMPLE_NODE_IMAGE = `registry.access.redhat.com/ubi9/nodejs-20-minimal@sha256:${'0'.repeat(64)}`;

export interface SizeResults {
  bundleRawBytes: number;
  bundleGzipBytes: number;
  bundleBase64GzipBytes: number;
  machineConfigHostBytes: number;
  machineConfigPodmanBytes: number;
  /** Raw minified bytes each part contributes (esbuild's metafile), largest first: where the budget goes. */
  bundleParts: { part: string; bytes: number }[];
  budgets: typeof SIZE_BUDGETS;
}

/** A bundled input's part: the npm package for node_modules, else the src/ folder (one folder per concern). */
function partOf(input: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
  if (pkg) return pkg[1]!;
  const folder = /^src\/([^/]+)\//.exec(input);
  return folder ? `src/${folder[1]}` : input;
}

async function measureBundleParts(): Promise<{ part: string; bytes: number }[]> {
  const { outfile, result } = await buildBundleInMemory();
  const output = result.metafile.outputs[outfile];
  if (!output) throw new Error(`esbuild's metafile has no ${outfile}`);
  const parts = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const part = partOf(input);
    parts.set(part, (parts.get(part) ?? 0) + bytesInOutput);
  }
  return [...parts].map(([part, bytes]) => ({ part, bytes })).sort((a, b) => b.bytes - a.bytes);
}

export async function measureSize(): Promise<SizeResults> {
  const raw = readFileSync(BUNDLE_PATH);
  const gz = gzipSync(raw, { level: 9 });
  const render = (args: string[]) => execFileSync(process.execPath, [BUNDLE_PATH, 'render', 'machineconfig', ...args], { maxBuffer: 16 * 1024 * 1024 }).length;
  return {
    bundleRawBytes: raw.length,
    bundleGzipBytes: gz.length,
    bundleBase64GzipBytes: Buffer.byteLength(gz.toString('base64')),
    machineConfigHostBytes: render(['--runtime', 'host', '--allow-unsigned-media']),
    machineConfigPodmanBytes: render(['--runtime', 'podman', '--node-image', SAMPLE_NODE_IMAGE, '--allow-unsigned-media']),
    bundleParts: await measureBundleParts(),
    budgets: SIZE_BUDGETS,
  };
}
