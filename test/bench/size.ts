// Size of what goes on the node: the bundle raw; gzip -9 and base64 of it (what the MachineConfig carried until
// 2026-11-26, and what Ignition could undo itself); brotli and base64 of it; what the rendered MachineConfig
// carries for the agent (the brotli payload and its loader: src/render/payload.ts), which the budget applies to;
// and the whole MachineConfig for both runtimes. Budgets from DESIGN.md section 6: the MachineConfig is copied
// into the rendered config and stored in etcd (1.5 MiB per object).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { compressBundle } from '../../src/render/payload';
import { agentInMachineConfig, BUNDLE_PATH, buildBundleInMemory } from '../support/bundle';

export const SIZE_BUDGETS = {
  /**
   * DESIGN.md section 6: ≤ 200 KiB of bundle in the MachineConfig. Stated there as base64(gzip(bundle)), what
   * the MachineConfig carried then; it applies to what the MachineConfig carries now: base64 of the brotli
   * payload plus base64 of its loader.
   */
  agentInMachineConfigBytes: 200 * 1024,
  /** DESIGN.md section 6 / the brief: the rendered MachineConfig ≤ 256 KiB. */
  machineConfigBytes: 256 * 1024,
} as const;

/** A digest-pinned image reference for rendering the podman variant (the digest only has to be well formed). */
const SAMPLE_NODE_IMAGE = `registry.access.redhat.com/ubi9/nodejs-24-minimal@sha256:${'0'.repeat(64)}`;

export interface SizeResults {
  bundleRawBytes: number;
  bundleGzipBytes: number;
  bundleBase64GzipBytes: number;
  bundleBrotliBytes: number;
  bundleBase64BrotliBytes: number;
  /** From the rendered MachineConfig (host runtime): base64 characters of the payload's and the loader's data: URLs. */
  agentInMachineConfig: { payloadBytes: number; loaderBytes: number; totalBytes: number };
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
  const br = compressBundle(raw);
  // stderr kept out of the report: render's notes (no --internal-ip here) are for a factory, not for the size.
  const render = (args: string[]) => execFileSync(process.execPath, [BUNDLE_PATH, 'render', 'machineconfig', ...args], { maxBuffer: 16 * 1024 * 1024, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const host = render(['--runtime', 'host', '--allow-unsigned-media']);
  return {
    bundleRawBytes: raw.length,
    bundleGzipBytes: gz.length,
    bundleBase64GzipBytes: Buffer.byteLength(gz.toString('base64')),
    bundleBrotliBytes: br.length,
    bundleBase64BrotliBytes: Buffer.byteLength(br.toString('base64')),
    agentInMachineConfig: agentInMachineConfig(host),
    machineConfigHostBytes: Buffer.byteLength(host),
    machineConfigPodmanBytes: Buffer.byteLength(render(['--runtime', 'podman', '--node-image', SAMPLE_NODE_IMAGE, '--allow-unsigned-media'])),
    bundleParts: await measureBundleParts(),
    budgets: SIZE_BUDGETS,
  };
}
