// `sno-reconfigure prepare` against the cluster simulator (a running factory SNO), with a temp host root in
// which the agent was installed from a rendered MachineConfig, the kubelet's real certificates, and stand-in
// systemctl/podman on PATH that record what they were asked to do.
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { R } from '../../../src/cluster/resources';
import { startSimulator, type Simulator } from '../../sim/index';
import { issueClientCert } from '../../sim/pki';
import { writeKubeconfigFile } from '../../sim/cluster/kubeconfigs';
import { createStandInNode, type StandInNode } from '../../support/standin-host';
import { applyIgnition } from '../../support/ignition';
import { runCli } from '../../../src/cli/cli';
import { WORKSTATION_COMMANDS } from '../../../src/cli/workstation-commands';
import { buildMachineConfig } from '../../../src/render/machineconfig';
import { parseInternalAddresses } from '../../../src/render/internal-ip';
import { NODE_IMAGE_ARCHIVE_PATH } from '../../../src/render/layout';
import { DEFAULT_DROP_DIR, FACTORY_ADMIN_KUBECONFIG, KUBELET_HOLD_FILE, STATIC_POD_RESOURCES_DIR, TRUSTED_KEYS_DIR, UNSIGNED_MEDIA_FILE } from '../../../src/paths';
import { ASSISTED_DNSMASQ_MARKERS, INSTALLED_NAMES_CONF, LOCAL_DNS_ENV, LOCAL_DNS_UNIT } from '../../../src/render/local-dns';
import { parse as parseYaml } from 'yaml';
import { INVENTORY_ROW_FILE, BASELINE_FILE, DEFAULT_KUBECONFIG, DEFAULT_STATE_DIR, DONE_MARKER, NODE_KEY_FILE, NODE_PUBLIC_KEY_FILE, STATE_FILES } from '../../../src/paths';
import { publicKeyOf } from '../../../src/siteconfig/sealed';
import type { PrepareResult } from '../../../src/factory/prepare';
import { KUBELET_BOOTSTRAP_KUBECONFIG } from '../../../src/factory/preflight';

const IMAGE = 'registry.access.redhat.com/ubi9/nodejs-24-minimal@sha256:' + 'c'.repeat(64);
const IMAGE_ID = 'd'.repeat(64);
const BUNDLE = Buffer.from('#!/usr/bin/env node\nconsole.log("agent")\n');

describe('prepare', () => {
  let sim: Simulator;
  let node: StandInNode;

  before(async () => {
    sim = await startSimulator({ timeScale: 0.001, kubelet: 'running' });
    await sim.waitFor(() => sim.apiUp(), 10_000, 'API up');
  });
  after(async () => {
    await sim.stop();
  });

  /** A node root as the factory leaves it: kubeconfig, kubelet certificates, the agent installed by the MCD. */
  /** `internalIp` null: rendered without --internal-ip. */
  async function installNode(runtime: 'host' | 'podman', internalIp: string | null = `${sim.options.nodeIPs[0]}/24`): Promise<StandInNode> {
    const n = createStandInNode({ nodeName: sim.options.nodeName, kubelet: 'running' });
    const kc = path.join(n.root, DEFAULT_KUBECONFIG);
    mkdirSync(path.dirname(kc), { recursive: true });
    copyFileSync(sim.kubeconfigs.localhostRecovery, kc);
    cpSync(sim.staticPodResourcesDir, path.join(n.root, STATIC_POD_RESOURCES_DIR), { recursive: true });
    const pki = path.join(n.root, 'var/lib/kubelet/pki');
    mkdirSync(pki, { recursive: true });
    for (const f of ['kubelet-client-current.pem', 'kubelet-server-current.pem']) copyFileSync(path.join(sim.dir, 'kubelet', 'pki', f), path.join(pki, f));
    copyFileSync(sim.kubeconfigs.bootstrap, path.join(n.root, KUBELET_BOOTSTRAP_KUBECONFIG));
    const mc = buildMachineConfig({
      role: 'master',
      runtime,
      ...(runtime === 'podman' ? { nodeImage: IMAGE } : {}),
      bundle: BUNDLE,
      internalAddresses: parseInternalAddresses(internalIp === null ? [] : [internalIp]),
      nodeIpPinning: 'hint',
      trustedKeys: [],
      allowUnsignedMedia: true,
      enable: false,
      version: '0.0.0-test',
    });
    await applyIgnition(mc.spec.config, n.root);
    mkdirSync(path.join(n.root, 'usr/bin'), { recursive: true });
    writeNode(n, 'v22.12.0');
    return n;
  }

  /** The node's /usr/bin/node: a stand-in that reports this version. */
  function writeNode(n: StandInNode, version: string): void {
    writeFileSync(path.join(n.root, 'usr/bin/node'), `#!/bin/sh\n[ "$1" = --version ] && echo ${version}\n`, { mode: 0o755 });
  }

  async function prepare(n: StandInNode, ...args: string[]): Promise<{ code: number; out: string; err: string; result?: PrepareResult }> {
    let out = '';
    let err = '';
    const code = await runCli(['prepare', '--root', n.root, ...args], { out: (s) => (out += s), err: (s) => (err += s), env: n.env, cwd: n.dir });
    const result = args.includes('--json') && out ? (JSON.parse(out) as PrepareResult) : undefined;
    return { code, out, err, ...(result ? { result } : {}) };
  }

  function writeKubeletCert(n: StandInNode, days: number, cn = `system:node:${sim.options.nodeName}`): void {
    const dir = path.join(n.dir, 'cert');
    mkdirSync(dir, { recursive: true });
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', String(days), '-subj', `/O=system:nodes/CN=${cn}`], { stdio: 'ignore' });
    writeFileSync(path.join(n.root, 'var/lib/kubelet/pki/kubelet-client-current.pem'), readFileSync(path.join(dir, 'cert.pem'), 'utf8') + readFileSync(path.join(dir, 'key.pem'), 'utf8'));
  }

  const untouched = (n: StandInNode) => {
    assert.equal(existsSync(path.join(n.root, KUBELET_HOLD_FILE)), false, 'no kubelet hold');
    assert.equal(existsSync(path.join(n.root, BASELINE_FILE)), false, 'no baseline');
    assert.deepEqual(n.calls('systemctl'), [], 'systemctl not called');
  };

  describe('host runtime', () => {
    beforeEach(async () => {
      node = await installNode('host');
    });
    afterEach(() => node.cleanup());

    test('dry run on a healthy factory node: every check passes, the plan is shown, nothing changes', async () => {
      const res = await prepare(node, '--dry-run');
      assert.equal(res.code, 0, res.out + res.err);
      assert.doesNotMatch(res.out, /FAIL/);
      assert.match(res.out, /Dry run, nothing changed\. prepare would:/);
      assert.match(res.out, /ok {4}kubeadmin +the installer's kubeadmin Secret is there: a site-config may set a new kubeadmin password \(23 characters or more\)/);
      assert.match(res.out, /systemctl enable sno-reconfigure\.service/);
      assert.match(res.out, new RegExp(`create ${KUBELET_HOLD_FILE}`));
      untouched(node);
    });

    test('shows which site-config media the node accepts; refuses a node that records neither trusted keys nor --allow-unsigned-media', async () => {
      const res = await prepare(node, '--dry-run');
      assert.match(res.out, /ok {4}site-config-media +unsigned media are accepted \(the factory chose --allow-unsigned-media\)/);
      mkdirSync(path.join(node.root, TRUSTED_KEYS_DIR), { recursive: true });
      writeFileSync(path.join(node.root, TRUSTED_KEYS_DIR, 'site-signing.pem'), generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }));
      assert.match((await prepare(node, '--dry-run')).out, /ok {4}site-config-media +media must be signed by one of this node's trusted keys \(site-signing\.pem/);
      rmSync(path.join(node.root, TRUSTED_KEYS_DIR), { recursive: true });
      rmSync(path.join(node.root, UNSIGNED_MEDIA_FILE));
      const neither = await prepare(node, '--dry-run');
      assert.equal(neither.code, 1);
      assert.match(neither.out, /FAIL {2}site-config-media +unsigned media are accepted though the factory never chose --allow-unsigned-media \(no trusted keys on this node\)/);
      assert.match(neither.out, /→ Render the MachineConfig again with --trusted-key PEMFILE \(or --allow-unsigned-media\)/);
      untouched(node);
    });

    test('prepares: clears an old run, records the baseline, enables the agent, holds kubelet', async () => {
      mkdirSync(path.dirname(path.join(node.root, DONE_MARKER)), { recursive: true });
      writeFileSync(path.join(node.root, DONE_MARKER), '');
      mkdirSync(path.join(node.root, DEFAULT_STATE_DIR), { recursive: true });
      writeFileSync(path.join(node.root, DEFAULT_STATE_DIR, STATE_FILES.journal), '{}');
      const res = await prepare(node, '--json');
      assert.equal(res.code, 0, res.out + res.err);
      assert.ok(res.result?.ok);
      assert.ok(res.result.actions.every((a) => a.done));
      assert.equal(existsSync(path.join(node.root, DONE_MARKER)), false, 'done marker removed');
      assert.equal(existsSync(path.join(node.root, DEFAULT_STATE_DIR, STATE_FILES.journal)), false, 'stale journal removed');
      assert.ok(existsSync(path.join(node.root, KUBELET_HOLD_FILE)), 'kubelet held');
      assert.deepEqual(node.calls('systemctl').map((c) => c.args), [['try-restart', LOCAL_DNS_UNIT], ['enable', 'sno-reconfigure.service', 'sno-reconfigure-network.service']]);
      // The node-local DNS answers for the installed names with the internal IP (issue 14 item 2).
      const ip = sim.options.nodeIPs[0];
      assert.deepEqual(readFileSync(path.join(node.root, INSTALLED_NAMES_CONF), 'utf8').split('\n').filter((l) => l.startsWith('address=')), [
        `address=/api.sno1.factory.example.com/${ip}`, `address=/api-int.sno1.factory.example.com/${ip}`, `address=/apps.sno1.factory.example.com/${ip}`,
      ]);
      assert.match(readFileSync(path.join(node.root, LOCAL_DNS_ENV), 'utf8'), new RegExp(`^LOCAL_DNS_IP=${ip.replace(/\./g, '\\.')}$`, 'm'));
      assert.match(res.out, /"detail": "the node answers for api, api-int and \*\.apps of sno1\.factory\.example\.com itself, with 192\.168\.111\.20/);
      const baseline = JSON.parse(readFileSync(path.join(node.root, BASELINE_FILE), 'utf8')) as Record<string, unknown>;
      assert.equal(baseline.clusterName, sim.options.clusterName);
      assert.equal(baseline.baseDomain, sim.options.baseDomain);
      assert.equal(baseline.nodeName, sim.options.nodeName);
      assert.deepEqual(baseline.nodeAddresses, sim.options.nodeIPs);
      assert.deepEqual(baseline.internalAddresses, sim.options.nodeIPs);
      assert.match(res.out, /"detail": "internal IP 192\.168\.111\.20 is the node's installed IP"/);
      assert.equal(baseline.openshiftVersion, sim.options.version);
      assert.equal(baseline.runtime, 'host');
      // kube-system's and the installer's kubeadmin Secret's creation: the site judges a kubeadmin hash by them.
      const kubeadmin = baseline.kubeadmin as { kubeSystemCreated: string; secretCreated?: string };
      assert.equal(kubeadmin.kubeSystemCreated, sim.store.get(R.namespaces, 'kube-system')?.metadata?.creationTimestamp);
      assert.equal(kubeadmin.secretCreated, sim.store.get(R.secrets, 'kubeadmin', 'kube-system')?.metadata?.creationTimestamp);
      assert.match(String((baseline.kubeletCertificates as { client?: { notAfter?: string } }).client?.notAfter), /^\d{4}-\d\d-\d\dT/);
      assert.equal(res.result.shipBy, [(baseline.kubeletCertificates as { client: { notAfter: string } }).client.notAfter, (baseline.kubeletCertificates as { server: { notAfter: string } }).server.notAfter].sort()[0]);
      // Idempotent: a second run (after a power cut, say) passes and changes nothing new.
      const again = await prepare(node);
      assert.equal(again.code, 0, again.out);
      assert.match(again.out, /Prepared\. Shut the node down now/);
    });

    // The tenth hostile re-test of issue 36: re-armed, the node took the drop directory's file of its last relocation
    // again, the same signed stick again, and a route from the first relocation's backup.
    test('re-arming leaves the next site nothing of the last relocation: the signed config\'s moment closed, the drop directory emptied, the backups kept aside', async () => {
      const state = path.join(node.root, DEFAULT_STATE_DIR);
      mkdirSync(path.join(state, STATE_FILES.backups), { recursive: true });
      writeFileSync(path.join(state, STATE_FILES.backups, 'routes.json'), '{}');
      const digest = 'a'.repeat(64);
      writeFileSync(path.join(state, STATE_FILES.lastIssued), JSON.stringify({ issued: '2026-11-01T09:00:00Z', config: 'store-0041', digest }));
      writeFileSync(path.join(state, STATE_FILES.dropDirRenames), JSON.stringify({ 'site-config.yaml': { ino: 1, ctimeMs: 1 } }));
      // The eleventh: the network committed last made the next site's (a DHCP template, the same on paper) "in place".
      writeFileSync(path.join(state, 'network-committed.sha256'), `${'c'.repeat(64)}\n`);
      writeFileSync(path.join(state, 'network-desired.yaml'), 'interfaces: []\n');
      // The twelfth: the rollouts' baselines and the domain's progress of the last run.
      writeFileSync(path.join(state, 'rollouts.json'), '{}');
      writeFileSync(path.join(state, 'domain.json'), '{}');
      // The fourteenth: the last store's report (status showed it at the next) and the kubeconfig for its API name.
      writeFileSync(path.join(state, STATE_FILES.report), '{"result":"succeeded"}');
      writeFileSync(path.join(state, STATE_FILES.kubeconfig), 'apiVersion: v1\n');
      // A name taken already (a prepare within the same second): the next free one.
      const stamp = (ms: number) => `backups-before-${new Date(ms).toISOString().replace(/[-:]|\.\d+/g, '')}`;
      for (let t = Date.now(); t < Date.now() + 30_000; t += 1000) mkdirSync(path.join(state, stamp(t)), { recursive: true });
      const drop = path.join(node.root, DEFAULT_DROP_DIR);
      mkdirSync(path.join(drop, 'extra-manifests'), { recursive: true });
      writeFileSync(path.join(drop, 'site-config.yaml'), 'apiVersion: x\n');
      writeFileSync(path.join(drop, 'extra-manifests', 'a.yaml'), 'x\n');
      const dry = await prepare(node, '--dry-run');
      assert.match(dry.out, /mark the last signed site-config \(issued 2026-11-01T09:00:00Z\) finished/);
      assert.match(dry.out, /remove what the last relocation left in the drop directory \/etc\/sno-reconfigure\/site-config\.d \(2 entries\): the next site would be given it/);
      assert.ok(existsSync(path.join(drop, 'site-config.yaml')), 'a dry run changes nothing');
      const res = await prepare(node, '--json');
      assert.equal(res.code, 0, res.out + res.err);
      assert.deepEqual(JSON.parse(readFileSync(path.join(state, STATE_FILES.lastIssued), 'utf8')), { issued: '2026-11-01T09:00:00Z', config: 'store-0041', digest, finished: true });
      assert.equal(existsSync(path.join(state, STATE_FILES.dropDirRenames)), false);
      assert.deepEqual(readdirSync(drop), [], 'the drop directory is kept, empty');
      assert.equal(existsSync(path.join(state, STATE_FILES.backups)), false);
      assert.equal(existsSync(path.join(state, 'network-committed.sha256')), false);
      assert.equal(existsSync(path.join(state, 'network-desired.yaml')), false);
      assert.equal(existsSync(path.join(state, 'rollouts.json')), false);
      assert.equal(existsSync(path.join(state, 'domain.json')), false);
      assert.equal(existsSync(path.join(state, STATE_FILES.report)), false);
      assert.equal(existsSync(path.join(state, STATE_FILES.kubeconfig)), false);
      const aside = readdirSync(state).filter((n) => /^backups-before-.*-2$/.test(n));
      assert.equal(aside.length, 1);
      assert.match(aside[0]!, /^backups-before-\d{8}T\d{6}Z-2$/);
      assert.equal(readFileSync(path.join(state, aside[0]!, 'routes.json'), 'utf8'), '{}');
      // Nothing of it is left to do a second time.
      assert.doesNotMatch((await prepare(node, '--dry-run')).out, /last signed site-config|drop directory|backups as/);
    });

    // The fifteenth hostile re-test of issue 36: after prepare, store A's SSH key (in 99-master-ssh and in the early
    // keys of a run that never finished) and its renewal timer were still there at store B; a key added by hand at
    // store A stayed because nothing had recorded the factory's keys.
    test("re-arming takes back the last site's logins: core's keys and kubeadmin's password back to the factory's (recorded by the first prepare), early keys removed, the renewal timer off", async () => {
      const state = path.join(node.root, DEFAULT_STATE_DIR);
      type Mc = { metadata: { resourceVersion?: string }; spec: { config: { passwd: { users: { name: string; sshAuthorizedKeys: string[]; passwordHash?: string }[] } } } };
      type Secret = { metadata: { resourceVersion?: string }; data: Record<string, string> };
      const mc = () => sim.store.get(R.machineConfigs, '99-master-ssh') as unknown as Mc;
      const secret = () => sim.store.get(R.secrets, 'kubeadmin', 'kube-system') as unknown as Secret;
      const factoryMc = structuredClone(mc());
      const factorySecret = structuredClone(secret());
      const factoryKeys = factoryMc.spec.config.passwd.users[0]!.sshAuthorizedKeys;
      // A change of 99-master-ssh rolls the pool out; prepare refuses a pool that is not Updated.
      const rolledOut = async () => {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const holds = (o: unknown, type: string) => ((o as { status?: { conditions?: { type: string; status: string }[] } } | undefined)?.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
        await sim.waitFor(() => holds(sim.store.get(R.machineConfigPools, 'master'), 'Updated'), 60_000, 'pool master updated');
        // A file's rollout reboots the node.
        await sim.waitFor(() => holds(sim.store.get(R.nodes, sim.options.nodeName), 'Ready'), 60_000, 'node Ready');
      };
      // A MachineConfig of the factory's own; the eighteenth: one added or changed at store A goes with the node.
      const motd = (text: string) => ({ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name: '50-master-factory-motd', labels: { 'machineconfiguration.openshift.io/role': 'master' } }, spec: { config: { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/motd', contents: { source: `data:,${text}` }, mode: 420 }] } } } });
      sim.store.create(R.machineConfigs, motd('factory') as never);
      await rolledOut();
      try {
        const first = await prepare(node, '--json');
        assert.equal(first.code, 0, first.out + first.err);
        assert.deepEqual(JSON.parse(readFileSync(path.join(state, 'ssh-keys-factory.json'), 'utf8')), { keys: factoryKeys });
        const recorded = JSON.parse(readFileSync(path.join(state, 'machineconfigs-factory.json'), 'utf8')) as Record<string, string>;
        assert.deepEqual(Object.keys(recorded).sort(), ['00-master', '01-master-container-runtime', '01-master-kubelet', '50-master-factory-motd', '97-master-generated-kubelet', '99-master-generated-registries'], "the pool's MachineConfigs but the agent's 99-master-ssh");
        assert.match(recorded['50-master-factory-motd']!, /^[0-9a-f]{64}$/, 'compared by content');
        assert.equal(recorded['00-master'], '', "a controller's by name alone");
        assert.deepEqual(JSON.parse(readFileSync(path.join(state, 'kubeadmin-factory.json'), 'utf8')), { data: factorySecret.data.kubeadmin });

        // Store A: a key added by hand, a password of its own, early keys left by a run cut short, the timer enabled.
        const storeKey = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHandAddedByStoreA storeA@example.com';
        const withKey = structuredClone(mc());
        withKey.spec.config.passwd.users[0]!.sshAuthorizedKeys = [...factoryKeys, storeKey];
        // The sixteenth: a password for core added by hand (core has sudo) stayed through prepare.
        withKey.spec.config.passwd.users[0]!.passwordHash = '$6$storeA$' + 'x'.repeat(86);
        sim.store.update(R.machineConfigs, withKey as never);
        sim.store.update(R.secrets, { ...structuredClone(secret()), data: { kubeadmin: Buffer.from(`$2y$10$${'Q'.repeat(53)}`).toString('base64') } } as never);
        const early = path.join(node.root, 'var/home/core/.ssh/authorized_keys.d/sno-reconfigure');
        mkdirSync(path.dirname(early), { recursive: true });
        writeFileSync(early, `${storeKey}\n`);
        const wants = path.join(node.root, 'etc/systemd/system/timers.target.wants');
        mkdirSync(wants, { recursive: true });
        symlinkSync('/etc/systemd/system/sno-reconfigure-renew.timer', path.join(wants, 'sno-reconfigure-renew.timer'));
        await rolledOut();

        const dry = await prepare(node, '--dry-run');
        assert.match(dry.out, /core's SSH keys in the MachineConfig 99-master-ssh back to the factory's 1, 1 key\(s\) of an earlier site removed, core's password the factory's again; .*prepare waits until the pool master has rolled them out/);
        assert.match(dry.out, /kubeadmin's password back to the factory's: an earlier site's no longer logs in/);
        assert.match(dry.out, /remove the early SSH keys of core a run left behind/);
        assert.match(dry.out, /systemctl disable --now sno-reconfigure-renew\.timer/);
        assert.deepEqual(mc().spec.config.passwd.users[0]!.sshAuthorizedKeys, [...factoryKeys, storeKey], 'a dry run changes nothing');

        // The seventeenth (Q3): store A's key in a MachineConfig of its own, which the MCO merges in beside 99-master-ssh.
        const other = { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name: '99-master-ssh-storea', labels: { 'machineconfiguration.openshift.io/role': 'master' } }, spec: { config: { ignition: { version: '3.2.0' }, passwd: { users: [{ name: 'core', sshAuthorizedKeys: [storeKey] }] } } } };
        sim.store.create(R.machineConfigs, other as never);
        await rolledOut();
        const refused = await prepare(node);
        sim.store.delete(R.machineConfigs, other.metadata.name);
        await rolledOut();
        assert.equal(refused.code, 1, refused.out);
        assert.match(refused.out, /FAIL {2}ssh-keys +the MachineConfig 99-master-ssh-storea gives core SSH keys or a password besides 99-master-ssh: the machine-config operator adds them to the node, where no site-config can take them back\n/);
        assert.match(refused.out, /→ core's logins belong in 99-master-ssh, which holds the factory's and each site's own: delete it \(oc delete machineconfig 99-master-ssh-storea\)[^\n]*then run prepare again/);
        assert.equal(existsSync(early), true, 'a refused prepare changes nothing');

        // The eighteenth (R2): a key file in a MachineConfig of store A's, and the factory's MachineConfig changed there.
        const keyFile = { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name: '99-master-storea-keys', labels: { 'machineconfiguration.openshift.io/role': 'master' } }, spec: { config: { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/home/core/.ssh/authorized_keys.d/storea', contents: { source: `data:,${encodeURIComponent(storeKey)}` }, mode: 384 }] } } } };
        sim.store.create(R.machineConfigs, keyFile as never);
        // The nineteenth: the same file behind metadata anyone can write — a controller's annotation, the agent's unit name,
        // an ownerReference to the pool — and in 99-master-chrony, which should hold chrony.conf alone.
        const dodges = [
          { ...keyFile, metadata: { ...keyFile.metadata, name: '50-master-fake-generated', annotations: { 'machineconfiguration.openshift.io/generated-by-controller-version': 'copied' } } },
          { ...keyFile, metadata: { ...keyFile.metadata, name: '51-master-fake-agent' }, spec: { config: { ...keyFile.spec.config, systemd: { units: [{ name: 'sno-reconfigure.service', enabled: true }] } } } },
          { ...keyFile, metadata: { ...keyFile.metadata, name: '52-master-owned', ownerReferences: [{ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', name: 'master', uid: sim.store.get(R.machineConfigPools, 'master')!.metadata!.uid!, controller: true }] } },
          { ...keyFile, metadata: { ...keyFile.metadata, name: '99-master-chrony' } },
        ];
        // And a controller's MachineConfig, recorded by name alone, that lost its mark.
        const generated = sim.store.get(R.machineConfigs, '01-master-kubelet')!;
        sim.store.update(R.machineConfigs, { ...generated, metadata: { ...generated.metadata, annotations: {} } });
        for (const d of dodges) sim.store.create(R.machineConfigs, d as never);
        const changed = motd('store A');
        sim.store.update(R.machineConfigs, { ...changed, metadata: { ...changed.metadata, resourceVersion: (sim.store.get(R.machineConfigs, changed.metadata.name) as Mc).metadata.resourceVersion } } as never);
        await rolledOut();
        const added = await prepare(node);
        for (const d of [keyFile, ...dodges]) sim.store.delete(R.machineConfigs, d.metadata.name);
        sim.store.update(R.machineConfigs, { ...sim.store.get(R.machineConfigs, '01-master-kubelet')!, metadata: { ...sim.store.get(R.machineConfigs, '01-master-kubelet')!.metadata, annotations: generated.metadata!.annotations! } });
        const factoryMotd = motd('factory');
        sim.store.update(R.machineConfigs, { ...factoryMotd, metadata: { ...factoryMotd.metadata, resourceVersion: (sim.store.get(R.machineConfigs, factoryMotd.metadata.name) as Mc).metadata.resourceVersion } } as never);
        await rolledOut();
        assert.equal(added.code, 1, added.out);
        const refusal = /FAIL {2}machineconfigs +the MachineConfig ([^\n]*) was added or changed since prepare recorded the factory's: the machine-config operator applies it at every next site, whatever it holds \(a file can give a login\)\n/.exec(added.out);
        assert.deepEqual(refusal?.[1]?.split(', ').sort(), ['01-master-kubelet', '50-master-factory-motd', '50-master-fake-generated', '51-master-fake-agent', '52-master-owned', '99-master-chrony', '99-master-storea-keys'], added.out);
        assert.match(added.out, /→ delete it \(oc delete machineconfig [^)]*99-master-storea-keys[^)]*\) or restore the factory's, then run prepare again; to keep it for every site, move the record aside \(mv \/var\/lib\/sno-reconfigure\/machineconfigs-factory\.json [^)]*\) and run prepare again/);
        assert.equal(existsSync(early), true, 'a refused prepare changes nothing');

        const res = await prepare(node, '--json');
        assert.equal(res.code, 0, res.out + res.err);
        assert.deepEqual(mc().spec.config.passwd.users[0]!.sshAuthorizedKeys, factoryKeys);
        assert.equal(mc().spec.config.passwd.users[0]!.passwordHash, undefined, "the hand-added password is gone: the factory set none");
        assert.equal(secret().data.kubeadmin, factorySecret.data.kubeadmin);
        assert.equal(existsSync(early), false);
        assert.ok(node.calls('systemctl').some((c) => c.args.join(' ') === 'disable --now sno-reconfigure-renew.timer'));
        assert.ok(!JSON.stringify(res.result).includes(factorySecret.data.kubeadmin!), 'the hash is in no output');
      } finally {
        sim.store.delete(R.machineConfigs, '50-master-factory-motd');
        sim.store.update(R.machineConfigs, { ...factoryMc, metadata: { ...factoryMc.metadata, resourceVersion: mc().metadata.resourceVersion } } as never);
        sim.store.update(R.secrets, { ...factorySecret, metadata: { ...factorySecret.metadata, resourceVersion: secret().metadata.resourceVersion } } as never);
        await rolledOut();
      }
    });

    // The seventeenth: a pool a cut-off run left paused passed as Updated, and the factory's keys never reached the disk.
    test('refuses a paused machine-config pool, with the way to unpause it, changing nothing', async () => {
      type Pool = { metadata: { resourceVersion?: string }; spec: { paused?: boolean } };
      const pool = () => sim.store.get(R.machineConfigPools, 'master') as unknown as Pool;
      const paused = structuredClone(pool());
      paused.spec.paused = true;
      sim.store.update(R.machineConfigPools, paused as never);
      try {
        const res = await prepare(node);
        assert.equal(res.code, 1, res.out);
        assert.match(res.out, /FAIL {2}machineconfigpool +MachineConfigPool master: Updated=True[^\n]*, paused\n/);
        assert.match(res.out, /→ Unpause it \(`oc patch mcp master --type merge -p '\{"spec":\{"paused":false\}\}'`\), wait until it has rolled out/);
        untouched(node);
      } finally {
        const back = structuredClone(pool());
        back.spec.paused = false;
        sim.store.update(R.machineConfigPools, back as never);
      }
    });

    // The eleventh hostile re-test of issue 36: a damaged record of the last signed config was shipped without a word,
    // and at the site every signed config was refused.
    test('refuses a damaged record of the last signed site-config, changing nothing, with the way out', async () => {
      const state = path.join(node.root, DEFAULT_STATE_DIR);
      mkdirSync(state, { recursive: true });
      writeFileSync(path.join(state, STATE_FILES.lastIssued), 'null');
      const res = await prepare(node);
      assert.equal(res.code, 1, res.out);
      assert.match(res.out, /FAIL {2}last-issued +the record of the last signed site-config this node took \(\/var\/lib\/sno-reconfigure\/last-issued\.json\) is damaged \(it holds no issue date\): at the site every signed config would be refused/);
      assert.match(res.out, /→ If the office issued nothing newer for this node than the last config it applied, move the record aside \(mv \/var\/lib\/sno-reconfigure\/last-issued\.json \/var\/lib\/sno-reconfigure\/last-issued\.json\.bad\)/);
      untouched(node);
    });

    // The eleventh: an action that failed (here a filesystem mounted in the drop directory) stopped prepare with the
    // system's raw error.
    test('an action that fails stops prepare in a sentence naming it, and what was done before is kept', async () => {
      const busy = path.join(node.root, DEFAULT_DROP_DIR, 'mounted');
      mkdirSync(busy, { recursive: true });
      execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', busy]);
      try {
        const res = await prepare(node);
        assert.equal(res.code, 1, res.out + res.err);
        assert.match(res.out + res.err, /prepare stopped: it could not remove what the last relocation left in the drop directory \/etc\/sno-reconfigure\/site-config\.d \(1 entry\): the next site would be given it \(a filesystem is mounted there: unmount it\); what it did before is kept; fix the cause and run prepare again/);
        assert.doesNotMatch(res.out + res.err, /\n\s+at /, 'no stack trace');
      } finally {
        execFileSync('umount', [busy]);
      }
      assert.equal((await prepare(node)).code, 0, 'once the cause is gone, prepare goes on');
    });

    test('makes the node key for sealed site-config files once (0600, never printed), prints its public half, and keeps it', async () => {
      const res = await prepare(node);
      assert.equal(res.code, 0, res.out + res.err);
      const keyFile = path.join(node.root, NODE_KEY_FILE);
      assert.equal(statSync(keyFile).mode & 0o777, 0o600);
      const privateKeyPem = readFileSync(keyFile, 'utf8');
      const { fingerprint, publicKeyPem } = publicKeyOf(privateKeyPem);
      assert.equal(readFileSync(path.join(node.root, NODE_PUBLIC_KEY_FILE), 'utf8'), publicKeyPem);
      assert.ok(res.out.includes(`Node key for sealed site-config files (in the row as nodePublicKey; seal files to it with sno-reconfigure seal): ${fingerprint}\n${publicKeyPem}`), res.out);
      assert.ok(!res.out.includes('PRIVATE KEY') && !res.out.includes(privateKeyPem.split('\n')[1]!), 'the private key is never printed');
      const again = await prepare(node, '--json');
      assert.equal(again.code, 0, again.out);
      assert.equal(readFileSync(keyFile, 'utf8'), privateKeyPem, 'a second prepare keeps the key: files sealed to it stay readable');
      assert.equal(again.result?.nodeKey?.fingerprint, fingerprint);
    });

    test('writes and prints the node\'s inventory row: identity, uplink MAC, installed names, node key, ship-by (issue 30)', async () => {
      // This machine's identity and its default route's interface, as the kernel shows them.
      const at = (p: string, text: string) => {
        mkdirSync(path.dirname(path.join(node.root, p)), { recursive: true });
        writeFileSync(path.join(node.root, p), text);
      };
      at('sys/class/dmi/id/product_serial', 'CZ2042XYZ\n');
      at('sys/class/dmi/id/product_uuid', '4c4c4544-0042-3510-8052-b2c04f4d3232\n');
      at('proc/net/route', 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\nbr-ex\t006FA8C0\t00000000\t0001\t0\t0\t48\t00FFFFFF\t0\t0\t0\nbr-ex\t00000000\t016FA8C0\t0003\t0\t0\t48\t00000000\t0\t0\t0\n');
      at('sys/class/net/br-ex/address', '52:54:00:AA:BB:CC\n');
      const res = await prepare(node, '--json');
      assert.equal(res.code, 0, res.out + res.err);
      const row = (res.result as { inventoryRow?: Record<string, string> } | undefined)?.inventoryRow;
      const { fingerprint, publicKeyPem } = publicKeyOf(readFileSync(path.join(node.root, NODE_KEY_FILE), 'utf8'));
      assert.deepEqual(row, {
        serialNumber: 'CZ2042XYZ',
        systemUUID: '4c4c4544-0042-3510-8052-b2c04f4d3232',
        macAddress: '52:54:00:aa:bb:cc',
        clusterName: 'sno1',
        hostname: 'sno1-node',
        installedDomain: 'factory.example.com',
        openshiftVersion: '4.14.12',
        nodePublicKey: publicKeyPem,
        nodeKeyFingerprint: fingerprint,
        shipBy: res.result?.shipBy,
      });
      assert.deepEqual(parseYaml(readFileSync(path.join(node.root, INVENTORY_ROW_FILE), 'utf8')), [row], 'the file is a list of one row: rows of many nodes concatenate');
    });

    test('refuses when kubelet\'s client certificate would expire during the shipment', async () => {
      writeKubeletCert(node, 5);
      const res = await prepare(node);
      assert.equal(res.code, 1);
      assert.match(res.out, /FAIL {2}kubelet-client-cert +kubelet client certificate .*: it expires .*, in 4 days, less than the 7 days a shipment needs/);
      assert.match(res.out, /Refused: 1 check failed \(kubelet-client-cert\)\. Nothing was changed\./);
      untouched(node);
      const shorter = await prepare(node, '--min-cert-validity', '3d', '--dry-run');
      assert.equal(shorter.code, 0, shorter.out);
      const longer = await prepare(node, '--min-cert-validity', '30d', '--dry-run');
      assert.match(longer.out, /kubelet-server-cert .*less than the 30 days/);
    });

    test('refuses without a working bootstrap kubeconfig (the way back if certificates expire in transit)', async () => {
      rmSync(path.join(node.root, KUBELET_BOOTSTRAP_KUBECONFIG));
      const res = await prepare(node, '--dry-run');
      assert.equal(res.code, 1);
      assert.match(res.out, /FAIL {2}kubelet-bootstrap +\/etc\/kubernetes\/kubeconfig is missing/);
      // The Machine Config Server serves it (MCO pkg/server/server.go appendKubeConfig); no MachineConfig holds it.
      assert.match(res.out, /Restore \/etc\/kubernetes\/kubeconfig from the Machine Config Server, .*:22623\/config\/master/);
      assert.doesNotMatch(res.out, /01-master-kubelet/);
    });

    test('reports the group set kubelet will bootstrap with at the site: a cluster installed with 4.14 or later', async () => {
      const res = await prepare(node, '--dry-run', '--json');
      assert.equal(res.code, 0, res.out);
      const check = res.result?.checks.find((c) => c.id === 'kubelet-bootstrap');
      assert.match(check?.detail ?? '', /re-bootstrap at the site as the node-bootstrapper with groups system:serviceaccounts:openshift-machine-config-operator, system:serviceaccounts, system:authenticated \(the set of clusters installed with 4\.14 or later\)/);
      assert.deepEqual(res.result?.baseline?.kubeletCertificates.bootstrapGroups, ['system:serviceaccounts:openshift-machine-config-operator', 'system:serviceaccounts', 'system:authenticated']);
    });

    /** /etc/kubernetes/kubeconfig with a bootstrap certificate whose O is `groups`, as the installer writes it. */
    function writeBootstrapKubeconfig(n: StandInNode, groups: string[]): void {
      const client = issueClientCert(sim.signers.apiCa, { user: 'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper', groups, validityDays: 3650 });
      writeKubeconfigFile(path.join(n.root, KUBELET_BOOTSTRAP_KUBECONFIG), { server: sim.apiUrl, caPem: sim.caPem, client, clusterName: 'local', userName: 'kubelet' });
    }

    test('reports the shorter group set of a cluster installed before 4.14, which the site approves', async () => {
      writeBootstrapKubeconfig(node, ['system:serviceaccounts:openshift-machine-config-operator']);
      const res = await prepare(node, '--dry-run');
      assert.equal(res.code, 0, res.out);
      assert.match(res.out, /ok {4}kubelet-bootstrap +.*with groups system:serviceaccounts:openshift-machine-config-operator, system:authenticated \(the set of clusters installed before 4\.14, without system:serviceaccounts\)/);
    });

    test('refuses a bootstrap certificate whose groups the site would never approve', async () => {
      writeBootstrapKubeconfig(node, ['system:serviceaccounts:openshift-machine-config-operator', 'system:masters']);
      const res = await prepare(node, '--dry-run');
      assert.equal(res.code, 1);
      assert.match(res.out, /FAIL {2}kubelet-bootstrap +.*its node-bootstrapper would have groups .*has other groups \[system:masters\].*so the agent would never approve kubelet's bootstrap request at the site/);
    });

    test('refuses an internal IP that is not the node\'s installed IP (seed 000)', async () => {
      node.cleanup();
      node = await installNode('host', '192.168.127.10/24');
      const res = await prepare(node, '--dry-run');
      assert.equal(res.code, 1);
      assert.match(res.out, /FAIL {2}internal-ip +internal IP 192\.168\.127\.10 is not the node's installed IP: Node sno1-node has InternalIP 192\.168\.111\.20, and etcd/);
      assert.match(res.out, /→ Render the MachineConfig again with --internal-ip set to the node's installed address \(192\.168\.111\.20\)/);
    });

    test('refuses a node-local DNS without an internal IP: it would answer with the factory address, gone at the site', async () => {
      node.cleanup();
      node = await installNode('host', null);
      const ours = await prepare(node, '--dry-run');
      assert.equal(ours.code, 1);
      assert.match(ours.out, /FAIL {2}local-dns +the node-local DNS \(sno-reconfigure-dns\) would answer for api, api-int and \*\.apps of sno1\.factory\.example\.com with 192\.168\.111\.20, the factory address, gone from the node at the site without an internal IP/);
      assert.match(ours.out, /→ Render the MachineConfig again with --internal-ip 192\.168\.111\.20\/PREFIX \(the node keeps it at every site\), or --no-local-dns if every site's DNS serves these names, apply it and run prepare again\./);
      untouched(node);
      const real = await prepare(node);
      assert.equal(real.code, 1);
      assert.equal(existsSync(path.join(node.root, INSTALLED_NAMES_CONF)), false, 'no records to a dead address');
      assert.equal(existsSync(path.join(node.root, LOCAL_DNS_ENV)), false);
      untouched(node);
      // assisted-service's dnsmasq answers (and its forcedns puts first) the installed host IP: the same, and only --internal-ip helps.
      for (const f of [ASSISTED_DNSMASQ_MARKERS.configScript, ASSISTED_DNSMASQ_MARKERS.dispatcher]) {
        mkdirSync(path.dirname(path.join(node.root, f)), { recursive: true });
        writeFileSync(path.join(node.root, f), '# assisted-service\n');
      }
      const assisted = await prepare(node, '--dry-run');
      assert.equal(assisted.code, 1);
      assert.match(assisted.out, /FAIL {2}local-dns +assisted-service's node-local DNS \(50-master-dnsmasq-configuration\) would answer .* with 192\.168\.111\.20, the factory address/);
      assert.doesNotMatch(assisted.out, /--no-local-dns/);
      for (const f of [ASSISTED_DNSMASQ_MARKERS.configScript, ASSISTED_DNSMASQ_MARKERS.dispatcher]) rmSync(path.join(node.root, f));
      // Rendered with --no-local-dns: the site's DNS serves the names, nothing to refuse.
      rmSync(path.join(node.root, 'etc/systemd/system', LOCAL_DNS_UNIT));
      assert.match((await prepare(node, '--dry-run')).out, /ok {4}local-dns +no node-local DNS \(rendered with --no-local-dns\)/);
    });

    test('--admin-kubeconfig: stored with mode 0600 for the site\'s hand-off, its contents never printed', async () => {
      const none = await prepare(node, '--dry-run');
      assert.match(none.out, /ok {4}admin-kubeconfig +no factory admin kubeconfig: the site's hand-off kubeconfig will carry the node's rotating debug certificate/);
      const admin = issueClientCert(sim.signers.apiCa, { user: 'system:admin', groups: ['system:masters'], validityDays: 3650 });
      const file = path.join(node.dir, 'auth-kubeconfig');
      writeKubeconfigFile(file, { server: sim.apiUrl, caPem: sim.caPem, client: admin, clusterName: 'sno1', userName: 'admin' });
      const res = await prepare(node, '--admin-kubeconfig', file);
      assert.equal(res.code, 0, res.out + res.err);
      const notAfter = new Date(new X509Certificate(admin.certPem).validTo).toISOString();
      assert.ok(res.out.includes(`admin kubeconfig ${file}: client certificate valid until ${notAfter}; it will be stored in ${FACTORY_ADMIN_KUBECONFIG} (mode 0600)`), res.out);
      const stored = path.join(node.root, FACTORY_ADMIN_KUBECONFIG);
      assert.equal(readFileSync(stored, 'utf8'), readFileSync(file, 'utf8'));
      assert.equal(statSync(stored).mode & 0o777, 0o600);
      const secret = Buffer.from(admin.keyPem).toString('base64');
      for (const text of [res.out, res.err]) {
        assert.ok(!text.includes(secret.slice(0, 40)) && !text.includes('PRIVATE KEY') && !text.includes('client-key-data'), 'the key is never printed');
      }
      const again = await prepare(node, '--dry-run');
      assert.match(again.out, /ok {4}admin-kubeconfig +admin kubeconfig \/etc\/sno-reconfigure\/admin-kubeconfig: client certificate valid until .* \(stored by an earlier prepare\)/);
    });

    test('--admin-kubeconfig refuses a short-lived or unusable kubeconfig, changing nothing', async () => {
      const shortLived = issueClientCert(sim.signers.apiCa, { user: 'system:admin', groups: ['system:masters'], validityDays: 3 });
      const file = path.join(node.dir, 'short-kubeconfig');
      writeKubeconfigFile(file, { server: sim.apiUrl, caPem: sim.caPem, client: shortLived, clusterName: 'sno1', userName: 'admin' });
      const res = await prepare(node, '--admin-kubeconfig', file);
      assert.equal(res.code, 1);
      assert.match(res.out, /FAIL {2}admin-kubeconfig +admin kubeconfig .*short-kubeconfig: its client certificate expires .*, in 2 days, less than the shipment needs/);
      assert.equal(existsSync(path.join(node.root, FACTORY_ADMIN_KUBECONFIG)), false);
      untouched(node);
      writeFileSync(file, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://x:6443"}}]\nusers: [{name: u, user: {client-certificate: /tmp/a.crt, client-key: /tmp/a.key}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n');
      const paths = await prepare(node, '--admin-kubeconfig', file, '--dry-run');
      assert.equal(paths.code, 1);
      assert.match(paths.out, /FAIL {2}admin-kubeconfig +admin kubeconfig .* cannot be used: .*the kubeconfig must be self-contained/);
      const missing = await prepare(node, '--admin-kubeconfig', path.join(node.dir, 'nope'));
      assert.equal(missing.code, 1);
      assert.match(missing.err, /--admin-kubeconfig .*nope: cannot read .*nope \(ENOENT\)/);
    });

    test('the agent\'s credential: its NotAfter counts in the ship-by date, and the recovery token is named as its fallback', async () => {
      const res = await prepare(node, '--dry-run', '--json');
      assert.equal(res.code, 0, res.out);
      const check = res.result?.checks.find((c) => c.id === 'agent-credential');
      const user = (parseYaml(readFileSync(sim.kubeconfigs.localhostRecovery, 'utf8')) as { users: { user: Record<string, string> }[] }).users[0]?.user ?? {};
      const agentNotAfter = new Date(new X509Certificate(Buffer.from(user['client-certificate-data'] ?? '', 'base64')).validTo).toISOString();
      assert.ok(check?.ok);
      // 120 days of node-system-admin-client, refreshed 25 days before the factory shutdown (test/sim/cluster/options.ts).
      assert.ok(check?.detail.startsWith(`the agent's client certificate (${DEFAULT_KUBECONFIG}) is valid until ${agentNotAfter}, `), check?.detail);
      assert.match(check?.detail ?? '', /, 9\d days; if it expires, the agent falls back to the localhost-recovery-client token \/etc\/kubernetes\/static-pod-resources\/kube-apiserver-pod-10\/secrets\/localhost-recovery-client-token\/token$/);
      assert.equal(res.result?.baseline?.agentCredential?.notAfter, agentNotAfter);
      const certs = res.result?.baseline?.kubeletCertificates;
      assert.equal(res.result?.shipBy, [certs?.client?.notAfter, certs?.server?.notAfter, agentNotAfter].sort()[0]);
    });

    test('refuses when the agent\'s certificate would expire in transit and there is no recovery token', async () => {
      for (const revision of ['kube-apiserver-pod-9', 'kube-apiserver-pod-10']) rmSync(path.join(node.root, STATIC_POD_RESOURCES_DIR, revision), { recursive: true, force: true });
      const res = await prepare(node, '--dry-run', '--min-cert-validity', '100d');
      assert.equal(res.code, 1);
      assert.match(res.out, /FAIL {2}agent-credential +the agent's client certificate \(.*localhost-recovery\.kubeconfig\) is valid until .*, 9\d days; no localhost-recovery-client token was found to fall back to/);
    });

    test('local DNS: a node with assisted-service\'s dnsmasq keeps it, a node rendered with --no-local-dns is told what the site needs', async () => {
      // Both generations of 50-master-dnsmasq-configuration (assisted-service internal/network/manifests_generator.go):
      // since 71f3cc229 with dnsmasq_config.sh; before it /etc/dnsmasq.d/single-node.conf and the forcedns dispatcher only.
      const generations = [
        { name: 'dnsmasq_config.sh', files: [ASSISTED_DNSMASQ_MARKERS.configScript, ASSISTED_DNSMASQ_MARKERS.dispatcher, '/etc/dnsmasq.d/single-node.conf'] },
        { name: 'older, without dnsmasq_config.sh', files: [ASSISTED_DNSMASQ_MARKERS.dispatcher, '/etc/dnsmasq.d/single-node.conf'] },
      ];
      for (const generation of generations) {
        for (const f of generation.files) {
          mkdirSync(path.dirname(path.join(node.root, f)), { recursive: true });
          writeFileSync(path.join(node.root, f), '# assisted-service\n');
        }
        const assisted = await prepare(node, '--dry-run');
        assert.match(assisted.out, /ok {4}local-dns +the node answers for api, api-int and \*\.apps of sno1\.factory\.example\.com itself \(assisted-service's 50-master-dnsmasq-configuration\)/, generation.name);
        assert.doesNotMatch(assisted.out, /write \/etc\/dnsmasq\.d/, generation.name);
        for (const f of generation.files) rmSync(path.join(node.root, f));
      }
      rmSync(path.join(node.root, 'etc/systemd/system', LOCAL_DNS_UNIT));
      const none = await prepare(node, '--dry-run');
      assert.match(none.out, /ok {4}local-dns +no node-local DNS \(rendered with --no-local-dns\): at the site, the site's DNS must resolve api-int\.sno1\.factory\.example\.com and canary-openshift-ingress-canary\.apps\.sno1\.factory\.example\.com to this node \(from OpenShift 4\.14 the ingress canary probes a name under the installed \*\.apps: a wildcard record for apps\.sno1\.factory\.example\.com\), or the agent rolls the site network back/);
    });

    test('says at the factory when kubeadmin was removed: no site-config can bring it back (library-go bootstrapauthenticator)', async () => {
      const secret = sim.store.get(R.secrets, 'kubeadmin', 'kube-system')!;
      sim.store.delete(R.secrets, 'kubeadmin', 'kube-system');
      try {
        const res = await prepare(node, '--dry-run');
        assert.match(res.out, /ok {4}kubeadmin +kubeadmin cannot log in on this cluster \(its Secret was removed or created again later\) and no site-config can bring it back/);
      } finally {
        // Created again now: as OpenShift sees it, still removed (the following tests do not log in as kubeadmin).
        sim.store.create(R.secrets, { ...secret, metadata: { name: 'kubeadmin', namespace: 'kube-system' } });
      }
    });

    test('refuses a certificate that is not this node\'s', async () => {
      writeKubeletCert(node, 365, 'system:node:another-node');
      const res = await prepare(node, '--dry-run');
      assert.equal(res.code, 1);
      assert.match(res.out, /it is for system:node:another-node, not system:node:/);
    });

    test('refuses while a ClusterOperator is degraded', async () => {
      sim.degradeOperator('ingress', 'RouterDown', 'router pods crash-looping');
      try {
        const res = await prepare(node);
        assert.equal(res.code, 1);
        assert.match(res.out, /FAIL {2}clusteroperators +not healthy: ingress \(Available=\w+, Degraded=True\)/);
        untouched(node);
      } finally {
        sim.recoverOperator('ingress');
      }
    });

    test('refuses without the agent installed or a kubeconfig, saying what to do', async () => {
      rmSync(path.join(node.root, 'etc/systemd/system'), { recursive: true, force: true });
      rmSync(path.join(node.root, DEFAULT_KUBECONFIG));
      const res = await prepare(node, '--json');
      assert.equal(res.code, 1);
      const failed = new Map(res.result?.checks.filter((c) => !c.ok).map((c) => [c.id, c]));
      assert.match(failed.get('api')?.detail ?? '', /no kubeconfig at/);
      assert.match(failed.get('unit')?.remedy ?? '', /sno-reconfigure render machineconfig/);
      assert.ok(failed.has('kubelet-hold-dropin'));
      untouched(node);
    });

    test('refuses a node whose Node.js is missing or older than 22, and says to render the podman runtime instead', async () => {
      for (const [setup, detail] of [
        [() => rmSync(path.join(node.root, 'usr/bin/node')), /^\/usr\/bin\/node, which the unit runs the agent with, is missing$/],
        [() => writeNode(node, 'v20.20.2'), /^\/usr\/bin\/node is Node\.js v20\.20\.2; the agent needs 22 or later$/],
      ] as const) {
        setup();
        const res = await prepare(node, '--json');
        assert.equal(res.code, 1, res.out);
        const check = res.result?.checks.find((c) => c.id === 'node-runtime');
        assert.equal(check?.ok, false);
        assert.match(check?.detail ?? '', detail);
        assert.match(check?.remedy ?? '', /RHCOS ships none\)\. Render the MachineConfig with the podman runtime/);
        untouched(node);
      }
      writeNode(node, 'v22.1.0');
      const res = await prepare(node, '--json');
      assert.equal(res.result?.checks.find((c) => c.id === 'node-runtime')?.detail, '/usr/bin/node is Node.js v22.1.0');
    });

    test('bad usage: exit 2', async () => {
      const res = await prepare(node, '--min-cert-validity', 'a month');
      assert.equal(res.code, 2);
      assert.match(res.err, /--min-cert-validity must be a positive number of days/);
    });
  });

  describe('render checks --internal-ip against the cluster it can see', () => {
    async function render(env: Record<string, string>, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
      let out = '';
      let err = '';
      const bundle = path.join(sim.dir, 'bundle.cjs');
      writeFileSync(bundle, BUNDLE);
      // The host runtime: what is rendered is not the point here, the --internal-ip check is.
      const code = await runCli(['render', 'machineconfig', '--runtime', 'host', '--allow-unsigned-media', '--bundle', bundle, ...args], { out: (s) => (out += s), err: (s) => (err += s), env, cwd: sim.dir }, WORKSTATION_COMMANDS);
      return { code, out, err };
    }

    test('refuses an address that is not among the Node\'s InternalIP addresses, through --kubeconfig or $KUBECONFIG', async () => {
      const flag = await render({}, '--kubeconfig', sim.kubeconfigs.admin, '--internal-ip', '192.168.127.10/24');
      assert.equal(flag.code, 1);
      assert.equal(flag.out, '');
      assert.match(flag.err, /--internal-ip: internal IP 192\.168\.127\.10 is not the node's installed IP: Node sno1-node has InternalIP 192\.168\.111\.20, and etcd/);
      const env = await render({ KUBECONFIG: sim.kubeconfigs.admin }, '--internal-ip', '192.168.127.10/24');
      assert.equal(env.code, 1);
    });

    test('renders the installed address; without a cluster it renders and says prepare will check', async () => {
      const checked = await render({}, '--kubeconfig', sim.kubeconfigs.admin, '--internal-ip', `${sim.options.nodeIPs[0]}/24`);
      assert.equal(checked.code, 0, checked.err);
      assert.equal(checked.err, '');
      const unchecked = await render({}, '--internal-ip', '192.168.127.10/24');
      assert.equal(unchecked.code, 0, unchecked.err);
      assert.match(unchecked.err, /note: --internal-ip was not checked against the cluster \(no --kubeconfig or KUBECONFIG\); `prepare` checks it on the node/);
    });
  });

  describe('podman runtime', () => {
    beforeEach(async () => {
      node = await installNode('podman');
      // Stand-in podman: the image is in local storage with ID_OF_IMAGE; `save -o FILE` writes FILE; every call
      // is recorded. (test/integration/delivery/podman.test.ts runs the real podman.)
      writeFileSync(
        path.join(node.bin, 'podman'),
        `#!/usr/bin/env node
const fs = require('fs');
const args = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(path.join(node.standinDir, 'podman.jsonl'))}, JSON.stringify(args) + '\\n');
if (args[0] === 'image' && args[1] === 'inspect') console.log(${JSON.stringify(IMAGE_ID)});
if (args[0] === 'save') fs.writeFileSync(args[args.indexOf('-o') + 1], 'docker-archive of ' + args[args.length - 1]);
`,
        { mode: 0o755 },
      );
    });
    afterEach(() => node.cleanup());

    const podmanCalls = (): string[][] => {
      const f = path.join(node.standinDir, 'podman.jsonl');
      return existsSync(f) ? readFileSync(f, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string[]) : [];
    };

    test('saves the Node image into its archive, so image GC and crio-wipe cannot lose it', async () => {
      const res = await prepare(node);
      assert.equal(res.code, 0, res.out + res.err);
      const archive = path.join(node.root, NODE_IMAGE_ARCHIVE_PATH);
      assert.equal(readFileSync(archive, 'utf8'), `docker-archive of ${IMAGE}`);
      assert.equal(statSync(archive).mode & 0o777, 0o600);
      assert.equal(existsSync(`${archive}.partial`), false);
      assert.equal(readFileSync(`${archive}.id`, 'utf8'), `${IMAGE_ID}\n`);
      // the launcher checks this before `podman load`: a damaged archive is reported, not loaded
      assert.equal(readFileSync(`${archive}.sha256`, 'utf8'), `${createHash('sha256').update(`docker-archive of ${IMAGE}`).digest('hex')}\n`);
      assert.deepEqual(podmanCalls().map((c) => c.slice(0, 3)), [['image', 'exists', IMAGE], ['image', 'inspect', '--format'], ['save', '--format', 'docker-archive']]);
      const baseline = JSON.parse(readFileSync(path.join(node.root, BASELINE_FILE), 'utf8')) as Record<string, unknown>;
      assert.equal(baseline.runtime, 'podman');
      assert.equal(baseline.nodeImage, IMAGE);
    });

    test('with the archive, its image ID and its sha256 already saved, nothing is pulled or saved again', async () => {
      mkdirSync(path.dirname(path.join(node.root, NODE_IMAGE_ARCHIVE_PATH)), { recursive: true });
      writeFileSync(path.join(node.root, NODE_IMAGE_ARCHIVE_PATH), 'archive');
      writeFileSync(path.join(node.root, `${NODE_IMAGE_ARCHIVE_PATH}.id`), `${IMAGE_ID}\n`);
      const res = await prepare(node, '--dry-run');
      assert.match(res.out, /podman save .*and its sha256 to/, 'no sha256 recorded yet: saved again');
      writeFileSync(path.join(node.root, `${NODE_IMAGE_ARCHIVE_PATH}.sha256`), `${createHash('sha256').update('archive').digest('hex')}\n`);
      const again = await prepare(node, '--dry-run');
      assert.equal(again.code, 0, again.out);
      assert.doesNotMatch(again.out, /podman (pull|save)/);
    });
  });
});
