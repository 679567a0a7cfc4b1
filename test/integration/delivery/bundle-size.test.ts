// The bundle budget (DESIGN.md section 6, runtime-libs.md section 1): the bundle rides in a MachineConfig that
// etcd stores twice (ours and the rendered one, 1.5 MiB per object), so what the MachineConfig carries for the
// agent must stay within 200 KiB and the whole MachineConfig within 256 KiB. DESIGN.md states the first as
// base64(gzip(bundle)), what the MachineConfig carried until the brotli payload and its loader replaced it
// (src/render/payload.ts); the budget applies to what it carries now, and base64(gzip) is reported beside it.
// Sizes are deterministic, so this is a test, not a benchmark. And it must be one self-contained file: only
// Node builtins required, no worker files, no native addons.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { brotliDecompressSync, gzipSync } from 'node:zlib';
import { createHash, generateKeyPairSync } from 'node:crypto';
import type { Metafile } from 'esbuild';
import { parse } from 'yaml';
import { agentInMachineConfig, buildBundleInMemory, ensureBundle, PROJECT_ROOT } from '../../support/bundle';
import { decodeFileContents, ignitionFromMachineConfig } from '../../support/ignition';
import { MC_BUNDLE_PATH, MC_PAYLOAD_PATH } from '../../../src/render/layout';
import { EXAMPLE_NODE_IMAGE } from '../../../machineconfigs/render-examples';

const KiB = 1024;
const BUNDLE_BUDGET = 200 * KiB;
const MACHINECONFIG_BUDGET = 256 * KiB;

describe('bundle budget', () => {
  let bundlePath: string;
  let bundle: Buffer;
  let metafile: Metafile;
  let outputs: string[];
  let dir: string;
  /** The largest MachineConfig: podman runtime, dual-stack internal IP, two keys. */
  let yaml: string;

  before(async () => {
    bundlePath = ensureBundle();
    bundle = readFileSync(bundlePath);
    const { result: res } = await buildBundleInMemory();
    metafile = res.metafile;
    outputs = res.outputFiles.map((f) => path.relative(PROJECT_ROOT, f.path));
    dir = mkdtempSync(path.join(os.tmpdir(), 'sno-bundle-'));
    for (const name of ['a', 'b']) writeFileSync(path.join(dir, `${name}.pub.pem`), generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }));
    yaml = execFileSync(process.execPath, [bundlePath, 'render', 'machineconfig', '--runtime', 'podman', '--node-image', EXAMPLE_NODE_IMAGE, '--internal-ip', '192.168.127.10/24', '--internal-ip', 'fd00:127::10/64', '--trusted-key', 'a.pub.pem', '--trusted-key', 'b.pub.pem'], { cwd: dir, encoding: 'utf8' });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test(`what the MachineConfig carries for the agent (base64 of the brotli payload and of its loader) <= ${BUNDLE_BUDGET / KiB} KiB`, (t) => {
    const carried = agentInMachineConfig(yaml);
    const kib = (n: number) => `${(n / KiB).toFixed(1)} KiB`;
    t.diagnostic(`the MachineConfig carries ${kib(carried.totalBytes)} for the agent (payload ${kib(carried.payloadBytes)} + loader ${kib(carried.loaderBytes)}); base64(gzip -9(bundle)) would be ${kib(gzipSync(bundle, { level: 9 }).toString('base64').length)}; budget ${kib(BUNDLE_BUDGET)}`);
    assert.ok(carried.totalBytes <= BUNDLE_BUDGET, `the MachineConfig carries ${kib(carried.totalBytes)} for the agent, over the ${BUNDLE_BUDGET / KiB} KiB budget (runtime-libs.md: import less — zod/mini, no client-node at runtime; workstation-only code goes to the workstation bundle)`);
    const files = ignitionFromMachineConfig(yaml).storage?.files ?? [];
    const payload = files.find((f) => f.path === MC_PAYLOAD_PATH);
    assert.ok(payload, 'the payload is in the MachineConfig');
    assert.deepEqual(brotliDecompressSync(decodeFileContents(payload)), bundle, 'the payload is this bundle, whole');
    assert.ok(files.some((f) => f.path === MC_BUNDLE_PATH), 'with its loader');
  });

  test(`the largest MachineConfig (podman, dual-stack internal IP, two keys) <= ${MACHINECONFIG_BUDGET / KiB} KiB`, () => {
    // etcd stores custom resources as JSON: the YAML parsed and serialized compactly is what counts there.
    const json = JSON.stringify(parse(yaml));
    for (const [what, size] of [['YAML', Buffer.byteLength(yaml)], ['JSON as stored', Buffer.byteLength(json)]] as const) {
      assert.ok(size <= MACHINECONFIG_BUDGET, `MachineConfig ${what} is ${(size / KiB).toFixed(1)} KiB, over ${MACHINECONFIG_BUDGET / KiB} KiB`);
    }
  });

  test('the build emits exactly one file, and dist/ is that build', () => {
    assert.deepEqual(outputs, ['dist/sno-reconfigure.cjs'], 'no chunks, no worker files, no source maps');
    assert.deepEqual(Object.keys(metafile.outputs), ['dist/sno-reconfigure.cjs']);
  });

  test('nothing outside Node builtins is required at run time, and no native addon is bundled', () => {
    const external = Object.values(metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path));
    const foreign = [...new Set(external)].filter((p) => !isBuiltin(p));
    assert.deepEqual(foreign, [], 'externals that are not Node builtins');
    const addons = Object.keys(metafile.inputs).filter((p) => p.endsWith('.node'));
    assert.deepEqual(addons, []);
    const text = bundle.toString('utf8');
    const required = [...text.matchAll(/\brequire\(\s*(["'`])([^"'`]+)\1\s*\)/g)].map((m) => m[2] ?? '');
    assert.ok(required.length > 0, 'the scan finds the bundle\'s requires');
    assert.deepEqual([...new Set(required.filter((r) => !isBuiltin(r)))], [], 'require() of non-builtins in the output');
    assert.equal(/\bprocess\.dlopen\(/.test(text), false, 'no process.dlopen');
  });

  test('it runs alone: copied into an empty directory, --version works and render says it is a workstation command', () => {
    const lonely = path.join(dir, 'alone');
    execFileSync('mkdir', ['-p', lonely]);
    const copy = path.join(lonely, 'sno-reconfigure.cjs');
    copyFileSync(bundlePath, copy);
    const env = { PATH: '/usr/bin:/bin', NODE_PATH: '' };
    const version = spawnSync(process.execPath, [copy, '--version'], { cwd: lonely, env, encoding: 'utf8' });
    assert.equal(version.status, 0, version.stderr);
    assert.match(version.stdout, /^\d+\.\d+\.\d+/);
    for (const command of ['render', 'seal']) {
      const alone = spawnSync(process.execPath, [copy, command, '--help'], { cwd: lonely, env, encoding: 'utf8' });
      assert.equal(alone.status, 1);
      assert.match(alone.stderr, new RegExp(`${command}: a workstation command, not part of the node's agent: .*sno-reconfigure-workstation\\.cjs`));
    }
  });

  test('as the MachineConfig installs it (the loader and the brotli payload, nothing else), it runs alone too', () => {
    const installed = path.join(dir, 'installed');
    execFileSync('mkdir', ['-p', installed]);
    const files = ignitionFromMachineConfig(yaml).storage?.files ?? [];
    for (const nodePath of [MC_BUNDLE_PATH, MC_PAYLOAD_PATH]) {
      const f = files.find((x) => x.path === nodePath)!;
      writeFileSync(path.join(installed, path.posix.basename(nodePath)), decodeFileContents(f), { mode: f.mode });
    }
    const loader = path.join(installed, path.posix.basename(MC_BUNDLE_PATH));
    const env = { PATH: '/usr/bin:/bin', NODE_PATH: '' };
    const version = spawnSync(process.execPath, [loader, '--version'], { cwd: installed, env, encoding: 'utf8' });
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout, execFileSync(process.execPath, [bundlePath, '--version'], { encoding: 'utf8' }));
    const render = spawnSync(process.execPath, [loader, 'render', '--help'], { cwd: installed, env, encoding: 'utf8' });
    assert.equal(render.status, 1);
    assert.match(render.stderr, /render: a workstation command, not part of the node's agent/);
  });

  test('beside the workstation bundle, the node bundle hands render over, and the MachineConfig embeds the node bundle', () => {
    const both = path.join(dir, 'both');
    execFileSync('mkdir', ['-p', both]);
    const copy = path.join(both, 'sno-reconfigure.cjs');
    copyFileSync(bundlePath, copy);
    copyFileSync(path.join(path.dirname(bundlePath), 'sno-reconfigure-workstation.cjs'), path.join(both, 'sno-reconfigure-workstation.cjs'));
    const sha = createHash('sha256').update(bundle).digest('hex');
    for (const entry of ['sno-reconfigure.cjs', 'sno-reconfigure-workstation.cjs']) {
      const render = spawnSync(process.execPath, [path.join(both, entry), 'render', 'machineconfig', '--runtime', 'host', '--allow-unsigned-media'], { cwd: both, env: { PATH: '/usr/bin:/bin' }, encoding: 'utf8' });
      assert.equal(render.status, 0, render.stderr);
      assert.match(render.stdout, new RegExp(`sno-reconfigure.io/bundle-sha256: ${sha}`), `${entry} renders a MachineConfig with the node bundle`);
    }
  });
});
