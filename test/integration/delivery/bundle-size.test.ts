// The bundle budget (DESIGN.md section 6, runtime-libs.md section 1): the bundle rides in a MachineConfig that
// etcd stores twice (ours and the rendered one, 1.5 MiB per object), so base64(gzip -9) must stay within
// 200 KiB and the whole MachineConfig within 256 KiB. Sizes are deterministic, so this is a test, not a benchmark.
// And it must be one self-contained file: only Node builtins required, no worker files, no native addons.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { createHash, generateKeyPairSync } from 'node:crypto';
import type { Metafile } from 'esbuild';
import { parse } from 'yaml';
import { buildBundleInMemory, ensureBundle, PROJECT_ROOT } from '../../support/bundle';
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

  before(async () => {
    bundlePath = ensureBundle();
    bundle = readFileSync(bundlePath);
    const { result: res } = await buildBundleInMemory();
    metafile = res.metafile;
    outputs = res.outputFiles.map((f) => path.relative(PROJECT_ROOT, f.path));
    dir = mkdtempSync(path.join(os.tmpdir(), 'sno-bundle-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test(`base64(gzip -9(bundle)) <= ${BUNDLE_BUDGET / KiB} KiB`, () => {
    const size = gzipSync(bundle, { level: 9 }).toString('base64').length;
    assert.ok(size <= BUNDLE_BUDGET, `base64(gzip) is ${(size / KiB).toFixed(1)} KiB, over the ${BUNDLE_BUDGET / KiB} KiB budget (runtime-libs.md: import less — zod/mini, no client-node at runtime)`);
  });

  test(`the largest MachineConfig (podman, dual-stack internal IP, two keys) <= ${MACHINECONFIG_BUDGET / KiB} KiB`, () => {
    for (const name of ['a', 'b']) writeFileSync(path.join(dir, `${name}.pub.pem`), generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }));
    const yaml = execFileSync(process.execPath, [bundlePath, 'render', 'machineconfig', '--runtime', 'podman', '--node-image', EXAMPLE_NODE_IMAGE, '--internal-ip', '192.168.127.10/24', '--internal-ip', 'fd00:127::10/64', '--trusted-key', 'a.pub.pem', '--trusted-key', 'b.pub.pem'], { cwd: dir, encoding: 'utf8' });
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
