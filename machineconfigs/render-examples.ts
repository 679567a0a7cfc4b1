// Regenerates the example MachineConfigs in machineconfigs/ with the built tool, and the unit files in systemd/
// from their template. Run: `npm run build && tsx machineconfigs/render-examples.ts` (or `--check`: exit 1 and
// list what is stale). test/integration/delivery/machineconfig.test.ts fails when a committed file is stale.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderAgentUnit, renderKubeletHoldDropin, UNIT_VARIANTS } from '../src/render/unit';
import { KUBELET_HOLD_DROPIN } from '../src/render/layout';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BUNDLE = path.join(PROJECT_ROOT, 'dist', 'sno-reconfigure.cjs');

/**
 * A real published digest of ubi9/nodejs-24-minimal (Node.js 24 LTS, maintained until 2028-04-30), its multi-arch
 * manifest list as pinned in a public Dockerfile; pin the digest you tested at your factory instead.
 */
export const EXAMPLE_NODE_IMAGE = 'registry.access.redhat.com/ubi9/nodejs-24-minimal@sha256:a811f918c315776fca10d1b1eef4c8a7c1f223a10d19ddd21ec68bf282e2230d';

export interface Example {
  /** Relative to the project root. */
  file: string;
  args: string[];
}

export const EXAMPLES: Example[] = [
  { file: 'machineconfigs/50-master-sno-reconfigure.host.yaml', args: ['--runtime', 'host', '--allow-unsigned-media'] },
  { file: 'machineconfigs/50-master-sno-reconfigure.podman.yaml', args: ['--runtime', 'podman', '--node-image', EXAMPLE_NODE_IMAGE, '--trusted-key', 'machineconfigs/keys/site-signing.pub.pem'] },
  {
    file: 'machineconfigs/50-master-sno-reconfigure.internal-ip.yaml',
    args: ['--runtime', 'host', '--internal-ip', '192.168.127.10/24', '--trusted-key', 'machineconfigs/keys/site-signing.pub.pem'],
  },
];

/** What `sno-reconfigure render machineconfig ARGS` prints, run from the project root with the built bundle. */
export function renderExample(example: Example, bundle = BUNDLE): string {
  return execFileSync(process.execPath, [bundle, 'render', 'machineconfig', ...example.args], { cwd: PROJECT_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** systemd/ holds the rendered units for reading and review; the template in src/render/unit.ts is the source. */
export function renderedSystemdFiles(): Map<string, string> {
  const out = new Map<string, string>();
  for (const v of UNIT_VARIANTS) out.set(`systemd/${v}/sno-reconfigure.service`, renderAgentUnit(v));
  out.set(`systemd/kubelet.service.d/${KUBELET_HOLD_DROPIN}`, renderKubeletHoldDropin());
  return out;
}

export function allGenerated(bundle = BUNDLE): Map<string, string> {
  const out = new Map<string, string>();
  for (const ex of EXAMPLES) out.set(ex.file, renderExample(ex, bundle));
  for (const [f, text] of renderedSystemdFiles()) out.set(f, text);
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!existsSync(BUNDLE)) {
    console.error(`${path.relative(PROJECT_ROOT, BUNDLE)} is missing: run \`npm run build\` first`);
    process.exit(1);
  }
  const check = process.argv.includes('--check');
  const stale: string[] = [];
  for (const [file, text] of allGenerated()) {
    const target = path.join(PROJECT_ROOT, file);
    const current = existsSync(target) ? readFileSync(target, 'utf8') : undefined;
    if (current === text) continue;
    stale.push(file);
    if (!check) {
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, text);
    }
  }
  for (const f of stale) console.log(`${check ? 'stale' : 'wrote'} ${f}`);
  if (check && stale.length > 0) process.exit(1);
}
