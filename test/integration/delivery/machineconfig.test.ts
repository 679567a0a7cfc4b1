// The committed example MachineConfigs: regenerated with the built tool and compared, validated against the real
// MachineConfig CRD schema and by the real `ignition-validate`, every file decoded back to its source bytes,
// and installed into a temp root the way the MCD would, where systemd accepts the result.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { parse } from 'yaml';
import { ensureDebianPackages } from '../../support/apt';
import { ensureBundle, PROJECT_ROOT } from '../../support/bundle';
import { applyIgnition, decodeFileContents, ignitionFromMachineConfig, type IgnConfig } from '../../support/ignition';
import { loadCrdValidator } from '../../sim/crd-schema';
import { EXAMPLES, renderExample } from '../../../machineconfigs/render-examples';
import { DISPATCHER_PATHS, KUBELET_HOLD_DROPIN, MC_BUNDLE_PATH, MC_PAYLOAD_PATH, MC_WRAPPER_PATH, NODEIP_HINT_PATH, PODMAN_LAUNCHER_PATH, RUNTIME_ENV_PATH } from '../../../src/render/layout';
import { compressBundle, renderLoader } from '../../../src/render/payload';
import { renderPodmanLauncher } from '../../../src/render/podman';
import { renderAgentUnit, renderKubeletHoldDropin } from '../../../src/render/unit';
import { parseInternalAddresses, renderDispatcherScript, renderNodeIpHint } from '../../../src/render/internal-ip';
import { TRUSTED_KEYS_DIR } from '../../../src/paths';

describe('example MachineConfigs', () => {
  let bundle: string;
  const rendered = new Map<string, string>();
  const tmp: string[] = [];

  before(() => {
    ensureDebianPackages(['ignition', 'systemd']);
    bundle = ensureBundle();
    for (const ex of EXAMPLES) rendered.set(ex.file, renderExample(ex, bundle));
  });
  after(() => {
    for (const d of tmp) rmSync(d, { recursive: true, force: true });
  });

  test('the committed examples are what the tool renders now (regenerate: tsx machineconfigs/render-examples.ts)', () => {
    for (const ex of EXAMPLES) {
      const committed = readFileSync(path.join(PROJECT_ROOT, ex.file), 'utf8');
      assert.ok(committed === rendered.get(ex.file), `${ex.file} is stale: run \`npm run build && npx tsx machineconfigs/render-examples.ts\``);
    }
  });

  test('each is a valid MachineConfig for the real CRD schema, and nothing in it would be pruned', () => {
    const validator = loadCrdValidator();
    for (const [file, text] of rendered) {
      const mc = parse(text) as { apiVersion: string; kind: string };
      const res = validator.validate(mc.apiVersion, mc.kind, mc);
      assert.deepEqual(res.errors, [], file);
      assert.deepEqual(res.pruned, mc, `${file}: the API server would drop fields`);
    }
  });

  test('each Ignition config passes the real ignition-validate (and a broken one does not)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sno-ign-'));
    tmp.push(dir);
    for (const [file, text] of rendered) {
      const cfgPath = path.join(dir, `${path.basename(file)}.ign`);
      writeFileSync(cfgPath, JSON.stringify(ignitionFromMachineConfig(text)));
      const res = spawnSync('ignition-validate', [cfgPath], { encoding: 'utf8' });
      assert.equal(res.status, 0, `${file}: ${res.stdout}${res.stderr}`);
      assert.equal(`${res.stdout}${res.stderr}`.trim(), '', `${file}: ignition-validate warned`);
    }
    const broken = ignitionFromMachineConfig(rendered.get(EXAMPLES[0]!.file)!);
    broken.storage!.files![0]!.path = 'usr/local/bin/relative';
    writeFileSync(path.join(dir, 'broken.ign'), JSON.stringify(broken));
    assert.notEqual(spawnSync('ignition-validate', [path.join(dir, 'broken.ign')]).status, 0);
  });

  test('every file decodes back to its source bytes', () => {
    const bundleBytes = readFileSync(bundle);
    const internal = parseInternalAddresses(['192.168.127.10/24']);
    const key = readFileSync(path.join(PROJECT_ROOT, 'machineconfigs/keys/site-signing.pub.pem'), 'utf8');
    const expected: Record<string, Buffer | string> = {
      [MC_BUNDLE_PATH]: renderLoader(),
      [MC_PAYLOAD_PATH]: compressBundle(bundleBytes),
      [PODMAN_LAUNCHER_PATH]: renderPodmanLauncher(),
      [NODEIP_HINT_PATH]: renderNodeIpHint(internal),
      [DISPATCHER_PATHS[0]]: renderDispatcherScript(internal),
      [DISPATCHER_PATHS[1]]: renderDispatcherScript(internal),
      [`${TRUSTED_KEYS_DIR}/site-signing.pem`]: key,
    };
    const seen = new Set<string>();
    for (const [file, text] of rendered) {
      const cfg: IgnConfig = ignitionFromMachineConfig(text);
      for (const f of cfg.storage?.files ?? []) {
        const want = expected[f.path];
        if (want === undefined) continue;
        assert.deepEqual(decodeFileContents(f), Buffer.isBuffer(want) ? want : Buffer.from(want), `${file}: ${f.path}`);
        seen.add(f.path);
      }
      const units = new Map((cfg.systemd?.units ?? []).map((u) => [u.name, u]));
      const podman = (cfg.storage?.files ?? []).some((f) => f.path === PODMAN_LAUNCHER_PATH);
      assert.equal(units.get('sno-reconfigure.service')?.contents, renderAgentUnit(podman ? 'podman' : 'machineconfig'), file);
      assert.equal(units.get('kubelet.service')?.dropins?.find((d) => d.name === KUBELET_HOLD_DROPIN)?.contents, renderKubeletHoldDropin(), file);
    }
    assert.deepEqual([...seen].sort(), Object.keys(expected).sort(), 'every expected file appears in some example');
  });

  test('installed the way the MCD would, systemd accepts the agent unit and the kubelet drop-in', async () => {
    for (const ex of EXAMPLES) {
      const root = mkdtempSync(path.join(os.tmpdir(), 'sno-install-'));
      tmp.push(root);
      cpSync('/usr/lib/systemd/system', path.join(root, 'usr/lib/systemd/system'), { recursive: true, verbatimSymlinks: true });
      const cfg = ignitionFromMachineConfig(rendered.get(ex.file)!);
      // The MCO's own kubelet.service, which the MachineConfig extends with a drop-in.
      execFileSync('install', ['-D', '-m', '0644', '/dev/null', path.join(root, 'etc/systemd/system/kubelet.service')]);
      writeFileSync(path.join(root, 'etc/systemd/system/kubelet.service'), '[Unit]\nDescription=Kubernetes Kubelet\n[Service]\nExecStart=/usr/bin/true\n[Install]\nWantedBy=multi-user.target\n');
      cpSync('/usr/bin/true', path.join(root, 'usr/bin/true'));
      cpSync('/usr/bin/true', path.join(root, 'usr/bin/node'));
      cpSync('/usr/bin/true', path.join(root, 'bin/bash')); // the podman unit's ExecStart= reads the launcher with bash
      // `prepare` enables the unit on the node; here the Ignition entry asks for it, which runs the same systemctl.
      await applyIgnition({ ...cfg, systemd: { units: (cfg.systemd?.units ?? []).map((u) => (u.name === 'sno-reconfigure.service' ? { ...u, enabled: true } : u)) } }, root);
      {
        const bundleOnNode = path.join(root, MC_BUNDLE_PATH);
        assert.equal(statSync(bundleOnNode).mode & 0o777, 0o755);
        assert.deepEqual(brotliDecompressSync(readFileSync(path.join(root, MC_PAYLOAD_PATH))), readFileSync(bundle));
        const version = spawnSync(process.execPath, [bundleOnNode, '--version'], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
        assert.equal(`${version.status} ${version.stdout}${version.stderr}`, `0 ${execFileSync(process.execPath, [bundle, '--version'], { encoding: 'utf8' })}`, 'the installed loader runs the bundle');
        if (ex.file.includes('podman')) assert.equal(statSync(path.join(root, PODMAN_LAUNCHER_PATH)).mode & 0o777, 0o755);
        else assert.equal(statSync(path.join(root, MC_WRAPPER_PATH)).mode & 0o777, 0o755);
        assert.equal(statSync(path.join(root, RUNTIME_ENV_PATH), { throwIfNoEntry: false }) !== undefined, ex.file.includes('podman'));
        const wants = path.join(root, 'etc/systemd/system/multi-user.target.wants/sno-reconfigure.service');
        assert.ok(lstatSync(wants).isSymbolicLink(), 'systemctl --root enable linked the unit');
        assert.equal(readlinkSync(wants), '/etc/systemd/system/sno-reconfigure.service');
        for (const unit of ['sno-reconfigure.service', 'kubelet.service']) {
          const res = spawnSync('systemd-analyze', ['verify', `--root=${root}`, unit], { encoding: 'utf8' });
          assert.equal(`${res.stdout}${res.stderr}`.trim(), '', `${ex.file}: ${unit}`);
          assert.equal(res.status, 0);
        }
      }
    }
  });
});
