// The MachineConfig's structure, decoded back: what lands where on the node, with which mode, and what is
// refused. Runs the real `render` command in-process against a stand-in bundle.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../../src/cli/cli';
import { WORKSTATION_COMMANDS } from '../../../src/cli/workstation-commands';
import { decodeFileContents, ignitionFromMachineConfig, type IgnConfig } from '../../support/ignition';
import { parse } from 'yaml';
import { brotliDecompressSync } from 'node:zlib';
import { DISPATCHER_PATHS, KUBELET_HOLD_DROPIN, MC_BUNDLE_PATH, MC_PAYLOAD_PATH, MC_WRAPPER_PATH, NODEIP_DROPIN, NODEIP_HINT_PATH, PODMAN_LAUNCHER_PATH, RUNTIME_ENV_PATH } from '../../../src/render/layout';
import { renderLoader } from '../../../src/render/payload';
import { TRUSTED_KEYS_DIR, UNSIGNED_MEDIA_FILE } from '../../../src/paths';
import { LOCAL_DNS_DISPATCHER, LOCAL_DNS_NM_CONF, LOCAL_DNS_UNIT } from '../../../src/render/local-dns';

const IMAGE = 'registry.access.redhat.com/ubi9/nodejs-24-minimal@sha256:' + '1'.repeat(64);

describe('render machineconfig', () => {
  let dir: string;
  let bundle: string;
  const bundleBytes = Buffer.from(`#!/usr/bin/env node\n"use strict";${'console.log("agent");'.repeat(200)}\n`);

  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sno-render-'));
    bundle = path.join(dir, 'sno-reconfigure.cjs');
    writeFileSync(bundle, bundleBytes);
    writeFileSync(path.join(dir, 'site.pub.pem'), generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }));
    writeFileSync(path.join(dir, 'site.key'), generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Unsigned media unless the test gives a key or says otherwise (`--media-as-given`): most tests are about other options. */
  async function render(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const media = args.includes('--trusted-key') || args.includes('--allow-unsigned-media') ? [] : ['--allow-unsigned-media'];
    const given = args.filter((a) => a !== '--media-as-given');
    const code = await runCli(['render', 'machineconfig', '--bundle', bundle, ...(args.includes('--media-as-given') ? [] : media), ...given], { out: (s) => (out += s), err: (s) => (err += s), env: {}, cwd: dir }, WORKSTATION_COMMANDS);
    return { code, out, err };
  }

  function files(cfg: IgnConfig): Map<string, { mode: number | undefined; text: Buffer }> {
    return new Map((cfg.storage?.files ?? []).map((f) => [f.path, { mode: f.mode, text: decodeFileContents(f) }]));
  }

  test('host runtime: the bundle (brotli, 0644) and its loader (0755), a wrapper, the unit (not enabled) and the kubelet hold', async () => {
    const res = await render('--runtime', 'host');
    assert.equal(res.code, 0, res.err);
    // Before the rollout and its reboot: the node-local DNS without an internal IP is what prepare refuses.
    assert.match(res.err, /note: without --internal-ip, `prepare` refuses the node-local DNS \(it would answer the installed api, api-int and \*\.apps with the factory address, gone at the site\): add --internal-ip ADDRESS\/PREFIX, or --no-local-dns/);
    for (const args of [['--no-local-dns'], ['--internal-ip', '192.168.127.10/24']]) assert.doesNotMatch((await render('--runtime', 'host', ...args)).err, /refuses the node-local DNS/, args.join(' '));
    const mc = parse(res.out) as { metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> } };
    assert.equal(mc.metadata.name, '50-master-sno-reconfigure');
    assert.deepEqual(mc.metadata.labels, { 'machineconfiguration.openshift.io/role': 'master' });
    assert.equal(mc.metadata.annotations['sno-reconfigure.io/runtime'], 'host');
    const cfg = ignitionFromMachineConfig(res.out);
    assert.equal(cfg.ignition.version, '3.2.0');
    const f = files(cfg);
    assert.deepEqual([...f.keys()], [MC_WRAPPER_PATH, MC_BUNDLE_PATH, MC_PAYLOAD_PATH, LOCAL_DNS_DISPATCHER, LOCAL_DNS_NM_CONF, UNSIGNED_MEDIA_FILE].sort());
    assert.deepEqual(brotliDecompressSync(f.get(MC_PAYLOAD_PATH)!.text), bundleBytes);
    assert.equal(f.get(MC_PAYLOAD_PATH)?.mode, 0o644);
    assert.equal(String(f.get(MC_BUNDLE_PATH)?.text), renderLoader());
    assert.equal(f.get(MC_BUNDLE_PATH)?.mode, 0o755);
    // The payload is brotli already, which Ignition cannot undo: it is written as it is. The loader is gzipped, which
    // Ignition and the MCO undo (-0.9 KiB in the MachineConfig).
    assert.equal(cfg.storage?.files?.find((x) => x.path === MC_PAYLOAD_PATH)?.contents?.compression, undefined, 'the payload is written as it is');
    assert.equal(cfg.storage?.files?.find((x) => x.path === MC_BUNDLE_PATH)?.contents?.compression, 'gzip', 'the loader is gzipped');
    assert.match(String(f.get(MC_WRAPPER_PATH)?.text), new RegExp(`exec /usr/bin/node ${MC_BUNDLE_PATH} "\\$@"`));
    const units = new Map((cfg.systemd?.units ?? []).map((u) => [u.name, u]));
    assert.deepEqual([...units.keys()], ['kubelet.service', LOCAL_DNS_UNIT, 'sno-reconfigure-network.service', 'sno-reconfigure-renew.service', 'sno-reconfigure-renew.timer', 'sno-reconfigure.service'].sort());
    // The early network phase: before configure-ovs and nodeip-configuration, bounded, armed by prepare with the agent.
    const early = units.get('sno-reconfigure-network.service');
    assert.match(early?.contents ?? '', new RegExp(`^ExecStart=/usr/bin/node ${MC_BUNDLE_PATH} early-network$`, 'm'));
    assert.match(early?.contents ?? '', /^Type=oneshot$/m);
    assert.match(early?.contents ?? '', /^After=NetworkManager\.service$/m);
    assert.match(early?.contents ?? '', /^Before=nodeip-configuration\.service ovs-configuration\.service/m);
    assert.match(early?.contents ?? '', /^TimeoutStartSec=\d+min$/m);
    assert.equal(early?.enabled, undefined);
    assert.equal(units.get('sno-reconfigure-renew.timer')?.enabled, undefined, 'the renewal timer ships disabled: the run enables it when the site-config asks');
    assert.match(units.get('sno-reconfigure-renew.service')?.contents ?? '', new RegExp(`^ExecStart=/usr/bin/node ${MC_BUNDLE_PATH} renew-certificates$`, 'm'));
    const agent = units.get('sno-reconfigure.service');
    assert.match(agent?.contents ?? '', new RegExp(`^ExecStart=/usr/bin/node ${MC_BUNDLE_PATH} run$`, 'm'));
    assert.equal(agent?.enabled, undefined, '`prepare` arms the unit, not the MachineConfig');
    const kubelet = units.get('kubelet.service');
    assert.equal(kubelet?.contents, undefined, 'the MCO\'s kubelet.service stays as it is');
    assert.equal(kubelet?.mask, undefined, 'never masked from the MachineConfig');
    assert.deepEqual(kubelet?.dropins?.map((d) => d.name), [KUBELET_HOLD_DROPIN]);
  });

  test('podman runtime: launcher, runtime.env and the podman unit', async () => {
    const res = await render('--runtime', 'podman', '--node-image', IMAGE, '--role', 'edge', '--enable');
    assert.equal(res.code, 0, res.err);
    const cfg = ignitionFromMachineConfig(res.out);
    const f = files(cfg);
    assert.equal(f.get(PODMAN_LAUNCHER_PATH)?.mode, 0o755);
    assert.match(String(f.get(RUNTIME_ENV_PATH)?.text), new RegExp(`^SNO_RECONFIGURE_NODE_IMAGE=${IMAGE.replace(/[.]/g, '\\.')}$`, 'm'));
    assert.equal(f.has(MC_WRAPPER_PATH), false);
    const agent = cfg.systemd?.units?.find((u) => u.name === 'sno-reconfigure.service');
    // bash reads the launcher: systemd never executes a file the MCD wrote (SELinux label, MCO#4287)
    assert.match(agent?.contents ?? '', new RegExp(`^ExecStart=/bin/bash ${PODMAN_LAUNCHER_PATH} run$`, 'm'));
    assert.match(agent?.contents ?? '', /^Delegate=yes$/m);
    // podman >= 5.3: conmon must outlive podman to clean up (lifecycle-agent runs its podman unit so)
    assert.match(agent?.contents ?? '', /^ExitType=cgroup$/m);
    assert.equal(agent?.enabled, true);
    assert.match(res.out, /name: 50-edge-sno-reconfigure/);
    assert.match(res.out, /run `sno-reconfigure-podman prepare` on the node/);
  });

  test('the default runtime is podman, the one an OpenShift node can run: without --node-image it says what to pass', async () => {
    const res = await render();
    assert.equal(res.code, 1);
    assert.equal(res.out, '');
    assert.match(res.err, /--runtime podman \(the default: OpenShift nodes ship no Node\.js\) needs --node-image NAME@sha256:DIGEST/);
    assert.match(res.err, /pass --runtime host instead/);
    const withImage = await render('--node-image', IMAGE);
    assert.equal(withImage.code, 0, withImage.err);
    assert.equal((parse(withImage.out) as { metadata: { annotations: Record<string, string> } }).metadata.annotations['sno-reconfigure.io/runtime'], 'podman');
    assert.ok(files(ignitionFromMachineConfig(withImage.out)).has(PODMAN_LAUNCHER_PATH));
  });

  test('the node-local DNS: a dnsmasq that steps aside for assisted-service\'s, the resolv.conf dispatcher; --no-local-dns leaves it out', async () => {
    const res = await render('--runtime', 'host');
    const cfg = ignitionFromMachineConfig(res.out);
    const unit = (cfg.systemd?.units ?? []).find((u) => u.name === LOCAL_DNS_UNIT);
    assert.equal(unit?.enabled, true);
    assert.match(unit?.contents ?? '', /^ConditionPathExists=!\/usr\/local\/bin\/dnsmasq_config\.sh$/m);
    // assisted-service before 71f3cc229 (2023-11) had no dnsmasq_config.sh; its forcedns dispatcher is in every generation.
    assert.match(unit?.contents ?? '', /^ConditionPathExists=!\/etc\/NetworkManager\/dispatcher\.d\/forcedns$/m);
    assert.match(unit?.contents ?? '', /^Before=kubelet\.service crio\.service$/m);
    assert.match(unit?.contents ?? '', /^ExecStart=\/usr\/sbin\/dnsmasq --keep-in-foreground --conf-file=\/dev\/null --conf-dir=\/etc\/dnsmasq\.d,/m);
    const f = files(cfg);
    assert.equal(f.get(LOCAL_DNS_DISPATCHER)?.mode, 0o755);
    assert.match(String(f.get(LOCAL_DNS_DISPATCHER)?.text), /^\[ -e \/etc\/NetworkManager\/dispatcher\.d\/forcedns \] && exit 0$/m);
    assert.match(String(f.get(LOCAL_DNS_NM_CONF)?.text), /^rc-manager=unmanaged$/m);
    const off = ignitionFromMachineConfig((await render('--runtime', 'host', '--no-local-dns')).out);
    assert.equal((off.systemd?.units ?? []).some((u) => u.name === LOCAL_DNS_UNIT), false);
    assert.equal(files(off).has(LOCAL_DNS_DISPATCHER), false);
  });

  test('internal IP and a trusted key: dispatcher scripts, hint, key file', async () => {
    const res = await render('--runtime', 'host', '--internal-ip', '192.168.127.10/24', '--trusted-key', 'site.pub.pem');
    assert.equal(res.code, 0, res.err);
    const f = files(ignitionFromMachineConfig(res.out));
    for (const p of DISPATCHER_PATHS) {
      assert.equal(f.get(p)?.mode, 0o755, p);
      assert.match(String(f.get(p)?.text), /^add_address 4 192\.168\.127\.10\/24$/m);
    }
    assert.match(String(f.get(NODEIP_HINT_PATH)?.text), /^KUBELET_NODEIP_HINT="192\.168\.127\.0"$/m);
    assert.match(String(f.get(`${TRUSTED_KEYS_DIR}/site.pem`)?.text), /^-----BEGIN PUBLIC KEY-----/);
  });

  test('--node-ip-pinning dropin pins kubelet and CRI-O with drop-ins instead of the hint', async () => {
    const res = await render('--runtime', 'host', '--internal-ip', '192.168.127.10/24', '--node-ip-pinning', 'dropin');
    assert.equal(res.code, 0, res.err);
    const cfg = ignitionFromMachineConfig(res.out);
    assert.equal(files(cfg).has(NODEIP_HINT_PATH), false);
    const units = new Map((cfg.systemd?.units ?? []).map((u) => [u.name, u]));
    assert.deepEqual(units.get('kubelet.service')?.dropins?.map((d) => d.name), [KUBELET_HOLD_DROPIN, NODEIP_DROPIN]);
    assert.match(units.get('crio.service')?.dropins?.[0]?.contents ?? '', /CONTAINER_STREAM_ADDRESS=192\.168\.127\.10/);
  });

  test('output is deterministic', async () => {
    const a = await render('--node-image', IMAGE, '--internal-ip', 'fd00::10/64', '--trusted-key', 'site.pub.pem');
    const b = await render('--node-image', IMAGE, '--internal-ip', 'fd00::10/64', '--trusted-key', 'site.pub.pem');
    assert.equal(a.out, b.out);
  });

  test('bad input: clear message naming the flag, exit 1; bad usage: exit 2', async () => {
    const cases: [string[], number, RegExp][] = [
      [['--runtime', 'podman'], 1, /--runtime podman .* needs --node-image NAME@sha256:DIGEST/],
      [['--runtime', 'podman', '--node-image', 'registry.access.redhat.com/ubi9/nodejs-24-minimal:1'], 1, /--node-image: .* is not pinned by digest/],
      [['--runtime', 'host', '--node-image', IMAGE], 1, /--node-image only applies to --runtime podman/],
      [['--runtime', 'host', '--internal-ip', '192.168.127.0/24'], 1, /--internal-ip "192\.168\.127\.0\/24": .* subnet address/],
      [['--runtime', 'host', '--trusted-key', 'site.key'], 1, /--trusted-key site\.key: this is a PRIVATE key/],
      [['--runtime', 'host', '--trusted-key', 'missing.pem'], 1, /--trusted-key missing\.pem: cannot read .*missing\.pem \(ENOENT\)/],
      [['--runtime', 'host', '--role', 'Master'], 1, /--role "Master"/],
      [['--runtime', 'host', '--node-ip-pinning', 'dropin'], 1, /needs --internal-ip/],
      [['--runtime', 'docker'], 2, /--runtime must be host or podman/],
      [['--node-image-archive', 'relative.tar', '--runtime', 'podman', '--node-image', IMAGE], 1, /expected an absolute node path/],
    ];
    for (const [args, code, re] of cases) {
      const res = await render(...args);
      assert.equal(res.code, code, `${args.join(' ')}: ${res.err}`);
      assert.match(res.err, re, args.join(' '));
      assert.equal(res.out, '');
    }
  });

  test('refuses to embed a file that is not the bundle', async () => {
    let err = '';
    const code = await runCli(['render', 'machineconfig', '--allow-unsigned-media', '--bundle', path.join(dir, 'site.pub.pem')], { out: () => undefined, err: (s) => (err += s), env: {}, cwd: dir }, WORKSTATION_COMMANDS);
    assert.equal(code, 1);
    assert.match(err, /is not the agent's bundle/);
  });

  test('signed media are the default: without --trusted-key or --allow-unsigned-media render refuses (exit 2, both flags named); the MachineConfig records the choice', async () => {
    const none = await render('--runtime', 'host', '--media-as-given');
    assert.equal(none.code, 2);
    assert.equal(none.out, '');
    assert.match(none.err, /--trusted-key PEMFILE.*--allow-unsigned-media/);
    const both = await render('--runtime', 'host', '--trusted-key', 'site.pub.pem', '--allow-unsigned-media');
    assert.equal(both.code, 2);
    assert.match(both.err, /contradict/);

    const signed = await render('--runtime', 'host', '--trusted-key', 'site.pub.pem');
    assert.equal(signed.code, 0, signed.err);
    assert.equal((parse(signed.out) as { metadata: { annotations: Record<string, string> } }).metadata.annotations['sno-reconfigure.io/site-config-media'], 'signed');
    assert.ok(!files(ignitionFromMachineConfig(signed.out)).has(UNSIGNED_MEDIA_FILE));
    const unsigned = await render('--runtime', 'host', '--allow-unsigned-media');
    assert.equal((parse(unsigned.out) as { metadata: { annotations: Record<string, string> } }).metadata.annotations['sno-reconfigure.io/site-config-media'], 'unsigned');
    assert.match(String(files(ignitionFromMachineConfig(unsigned.out)).get(UNSIGNED_MEDIA_FILE)?.text), /--allow-unsigned-media/);
  });

  test('render needs a subject', async () => {
    let err = '';
    const code = await runCli(['render'], { out: () => undefined, err: (s) => (err += s), env: {}, cwd: dir }, WORKSTATION_COMMANDS);
    assert.equal(code, 2);
    assert.match(err, /render machineconfig/);
  });
});
