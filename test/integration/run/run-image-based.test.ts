// Image-based install's configuration media (label cluster-config: cluster-configuration/manifest.json, its
// generated mirror sets, extra-manifests/) through `validate`, `plan` and a whole run against the simulator;
// and what needs recert — another cluster name, node IP or cluster ID — refused before any change. The
// manifest's keys are SeedReconfiguration's JSON keys (test/fixtures/image-based/seed-reconfiguration-keys.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { R } from '../../../src/cluster/resources';
import type { JournalData } from '../../../src/engine/journal';
import { BASELINE_FILE, DEFAULT_STATE_DIR, STATE_FILES } from '../../../src/paths';
import { STEPS } from '../../../src/steps/index';
import { parseLogs, startScenario, type AgentRun, type Scenario } from '../../support/scenario';
import { BUNDLE_PATH } from '../../support/bundle';
import { LONG_PATH_RELEASES } from '../../support/releases';
import { signedImageBasedMedia } from '../../support/signed-media';

const CLUSTER_ID = '5f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';

function manifest(s: Scenario, over: Record<string, unknown> = {}): string {
  const ip = s.sim.options.nodeIPs[0]!;
  const gw = ip.replace(/\.\d+$/, '.1');
  const nmstate = {
    interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: false, address: [{ ip, 'prefix-length': 24 }] } }],
    routes: { config: [{ destination: '0.0.0.0/0', 'next-hop-address': gw, 'next-hop-interface': 'eno1' }] },
    'dns-resolver': { config: { server: [gw] } },
  };
  return JSON.stringify({
    api_version: 1,
    base_domain: 'store42.example.com',
    cluster_name: s.sim.options.clusterName,
    cluster_id: CLUSTER_ID,
    node_ips: [ip],
    hostname: s.sim.options.nodeName,
    KubeconfigCryptoRetention: { KubeAPICrypto: { ServingCrypto: {}, ClientAuthCrypto: {} }, IngresssCrypto: {} },
    raw_nm_state_config: stringify(nmstate),
    pull_secret: JSON.stringify({ auths: { 'registry.store42.example.com:8443': { auth: Buffer.from('store42:pw').toString('base64') } } }),
    machine_networks: [`${gw.replace(/\.1$/, '.0')}/24`],
    chrony_config: 'server 10.20.0.5 iburst\ndriftfile /var/lib/chrony/drift\nmakestep 1.0 3\n',
    additionalTrustBundle: { userCaBundle: '', proxyConfigmapName: '', proxyConfigmapBundle: '' },
    ...over,
  });
}

// What openshift-install writes there: the install-config's imageDigestSources as they are
// (openshift/installer pkg/asset/imagebased/configimage/imagedigestsources.go).
const DIGEST_SOURCES = [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'], sourcePolicy: '' }];

/**
 * Unsigned media (the node holds no trusted key): only what unsigned media may carry (src/siteconfig/trust.ts) —
 * no ssh_key, kubeadmin_password_hash, node_labels or extra manifests, which need signed media.
 */
function volume(s: Scenario, over: Record<string, unknown> = {}): Record<string, string> {
  return { 'cluster-configuration/manifest.json': manifest(s, over), 'cluster-configuration/manifests/image-digest-sources.json': JSON.stringify(DIGEST_SOURCES) };
}

function writeBaseline(s: Scenario): void {
  mkdirSync(path.join(s.node.root, path.dirname(BASELINE_FILE)), { recursive: true });
  writeFileSync(path.join(s.node.root, BASELINE_FILE), JSON.stringify({ preparedAt: '2026-01-01T00:00:00Z', clusterName: s.sim.options.clusterName, nodeName: s.sim.options.nodeName, nodeAddresses: ['192.168.42.10'], internalAddresses: [], clusterID: CLUSTER_ID }));
}

/** The bundle on a directory (asynchronously: the simulator answers from this very process). */
function cli(s: Scenario, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BUNDLE_PATH, ...args], { env: s.node.env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

/**
 * A run of the bundled agent, stopped (SIGTERM, as `systemctl stop` sends) once settle reports every condition holding:
 * from there on it only counts the stability window. The agent's STATUS= lines (sd_notify) say when.
 */
async function runUntilSettled(s: Scenario): Promise<AgentRun> {
  const child = s.spawnRun(['--once'], { NOTIFY_SOCKET: '/run/systemd/notify' });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  let done: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void exited.then((e) => (done = e));
  const deadline = Date.now() + 15 * 60_000;
  while (!done && !s.node.calls('systemd-notify').some((c) => c.args.some((a) => a.startsWith('STATUS=') && a.includes('all conditions hold')))) {
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`settle did not see every condition hold within 15 minutes\n${stdout.slice(-4000)}\n${stderr.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGTERM');
  const { code, signal } = await exited;
  return { code, signal, stdout, stderr, logs: parseLogs(stdout) };
}

// Each case on a simulator and node of its own, two at a time: the refusals are over in seconds and fill the
// whole run's waits on the cluster.
describe('image-based install configuration media', { concurrency: 2 }, () => {
  // A long path: on the releases of test/support/releases.ts LONG_PATH_RELEASES (issue 37).
  for (const version of LONG_PATH_RELEASES) test(`OpenShift ${version}: an image-based install config volume: validate and plan read it, a run applies what it asks`, async () => {
    const s = await startScenario({ sim: { version } });
    try {
      writeBaseline(s);
      const dir = path.join(s.node.dir, 'ibi-iso');
      for (const [rel, text] of Object.entries(volume(s))) {
        mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
        writeFileSync(path.join(dir, rel), text);
      }
      const validated = await cli(s, ['validate', dir]);
      assert.equal(validated.code, 0, validated.out);
      assert.match(validated.out, /^cluster-configuration\/manifest\.json: valid, 2 warnings/m);
      assert.match(validated.out, /KubeconfigCryptoRetention: is not applied: the cluster keeps its own signers and kubeconfigs/);
      const planned = await cli(s, ['plan', dir, ...s.agentArgs]);
      assert.equal(planned.code, 0, planned.out);
      assert.match(planned.out, /Apply the site network \[network\]\n {3}- apply network eno1/);
      assert.match(planned.out, /write file \/etc\/chrony\.conf — the site's time sources 10\.20\.0\.5/);

      // manifest.json has no timeouts, so a run of it waits settle's default 2-minute stability window (DEFAULT_TIMEOUTS):
      // waiting it out proves nothing about the image-based media. The run goes until every settle condition holds
      // with what the media asked for — the rollouts done, the new names' certificates and routes in place — and is
      // stopped there as `systemctl stop` would; the window itself and a run to done are proven with site-configs that
      // set spec.timeouts.settleStability (test/integration/steps/settle.test.ts, run-happy.test.ts, version-matrix.test.ts).
      s.node.attachVolume('sr0', 'cluster-config', volume(s));
      // Powered on with the media in: the early network phase applies the site network at boot.
      s.node.powerCycle();
      const res = await runUntilSettled(s);
      assert.equal(res.code, 0, res.stdout.slice(-3000));
      assert.ok(res.logs.some((l) => l.msg === 'stopped during "Wait for the cluster to settle"; the run resumes there at the next start'), res.stdout.slice(-3000));
      const journal = JSON.parse(readFileSync(path.join(s.node.root, DEFAULT_STATE_DIR, STATE_FILES.journal), 'utf8')) as JournalData;
      const before = STEPS.slice(0, STEPS.findIndex((st) => st.name === 'settle')).map((st) => st.name);
      assert.deepEqual(before.filter((n) => journal.steps[n]?.state !== 'done'), [], 'every step before settle is done');
      assert.deepEqual((['domain', 'mirrors', 'pull-secret', 'network', 'chrony', 'kubeadmin'] as const).filter((n) => journal.steps[n]?.notRequested), [], 'each step the media asks for ran');
      assert.equal(res.logs.filter((l) => l.level === 'error').length, 0, 'no errors logged');
      const idms = s.sim.store.list(R.imageDigestMirrorSets).flatMap((o) => (o.spec as { imageDigestMirrors: { source: string; mirrors: string[] }[] }).imageDigestMirrors);
      assert.ok(idms.some((m) => m.source === 'quay.io/openshift-release-dev/ocp-release' && m.mirrors.includes('registry.store42.example.com:8443/ocp/release')), JSON.stringify(idms));
      // No kubeadmin_password_hash: image-based install leaves no kubeadmin login, and neither does the agent.
      assert.equal(s.sim.store.get(R.secrets, 'kubeadmin', 'kube-system'), undefined);
      assert.ok(s.sim.store.get(R.machineConfigs, '99-master-chrony'));
    } finally {
      await s.cleanup();
    }
  });

  for (const [what, over, expected] of [
    ['another cluster name', { cluster_name: 'store42' }, /cluster_name: is 'store42', but this cluster is named 'sno1': this node keeps its installed name and IP; use an image-based install for a rename/],
    ['a node IP the node does not get', { node_ips: ['10.99.0.7'] }, /node_ips: is 10\.99\.0\.7, neither an address of this node \(192\.168\.42\.10\) nor one raw_nm_state_config gives it: this node keeps its installed name and IP/],
    ['another cluster ID', { cluster_id: '00000000-0000-0000-0000-000000000001' }, /cluster_id: is 00000000-0000-0000-0000-000000000001, but this cluster's ID is 5f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0: this node keeps its installed name and IP; use an image-based install for a rename\. openshift-install draws a new cluster ID for each config ISO unless image-based-config\.yaml sets clusterID: set it to 5f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0 and make the ISO again/],
  ] as const) {
    test(`an image-based install config asking for ${what} is refused before any change`, async () => {
      const s = await startScenario();
      try {
        writeBaseline(s);
        s.node.attachVolume('sr0', 'cluster-config', volume(s, over));
        const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
        assert.notEqual(res.code, 0);
        assert.match(res.stdout, expected);
        assert.deepEqual(s.node.nmstateHistory().filter((l) => /apply/.test(l)), [], 'the network was never touched');
        assert.ok(!s.node.calls('systemctl').some((c) => c.args[0] === 'start' && c.args.includes('kubelet.service')), 'kubelet never started');
      } finally {
        await s.cleanup();
      }
    });
  }

  test('an image-based install volume whose image-digest-sources.json is not JSON is refused by name before any change, not aborted', async () => {
    const s = await startScenario();
    try {
      writeBaseline(s);
      s.node.attachVolume('sr0', 'cluster-config', { ...volume(s), 'cluster-configuration/manifests/image-digest-sources.json': 'registry.store42.example.com:8443/ocp/release\n' });
      const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
      assert.equal(res.code, 1, res.stdout.slice(-3000));
      assert.match(res.stdout, /cluster-configuration\/manifests\/image-digest-sources\.json: is not valid JSON/);
      assert.doesNotMatch(res.stdout, /internal error|TypeError/);
      assert.deepEqual(s.node.nmstateHistory().filter((l) => /apply/.test(l)), [], 'the network was never touched');
      assert.ok(!s.node.calls('systemctl').some((c) => c.args[0] === 'start' && c.args.includes('kubelet.service')), 'kubelet never started');
    } finally {
      await s.cleanup();
    }
  });

  // Issue 36: on a node that requires signatures, image-based media are taken when manifest.json.sig verifies and
  // sno_reconfigure binds them and pins the files beside it; a mirror set changed after signing is refused. The
  // signed volume here asks for another cluster ID, so the run stops at the node's check that follows validation:
  // reaching it proves the signature came off the media and verified.
  test('signed image-based media pass the signature check on a node that requires one; a mirror set changed after signing is refused by name', async () => {
    const s = await startScenario();
    try {
      writeBaseline(s);
      const signed = signedImageBasedMedia(s.node.root, { ...volume(s, { cluster_id: '00000000-0000-0000-0000-000000000001' }), 'extra-manifests/settings.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: store-settings, namespace: default}\ndata: {store: "42"}\n' });
      s.node.attachVolume('sr0', 'cluster-config', signed);
      const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
      assert.notEqual(res.code, 0);
      assert.doesNotMatch(res.stdout, /must be signed|must be pinned|does not verify/);
      assert.match(res.stdout, /cluster_id: is 00000000-0000-0000-0000-000000000001, but this cluster's ID is/);
      s.node.detachVolume('sr0');
      s.node.attachVolume('sr0', 'cluster-config', { ...signed, 'cluster-configuration/manifests/image-digest-sources.json': JSON.stringify([{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.evil.example.com/ocp/release'] }]) });
      const tampered = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
      assert.equal(tampered.code, 1, tampered.stdout.slice(-3000));
      assert.match(tampered.stdout, /cluster-configuration\/manifests\/image-digest-sources\.json: sha256 of 'manifests\/image-digest-sources\.json' is [0-9a-f]{64}, but sno_reconfigure\.sha256 pins/);
      assert.deepEqual(s.node.nmstateHistory().filter((l) => /apply/.test(l)), [], 'the network was never touched');
    } finally {
      await s.cleanup();
    }
  });

  // Issues 27, 36: image-based install's extra-manifests/ is judged like spec.extraManifestFiles — unsigned media
  // carry no extra manifests at all (here a ClusterRoleBinding of cluster-admin to every user).
  test('an image-based config volume whose extra-manifests/ grants cluster-admin to everyone is refused from unsigned media', async () => {
    const s = await startScenario();
    try {
      const dir = path.join(s.node.dir, 'ibi-iso-privileged');
      const binding = 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: store-admins}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:authenticated"}]\n';
      for (const [rel, text] of Object.entries({ ...volume(s), 'extra-manifests/admins.yaml': binding })) {
        mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
        writeFileSync(path.join(dir, rel), text);
      }
      const validated = await cli(s, ['validate', dir]);
      assert.equal(validated.code, 1, validated.out);
      assert.match(validated.out, /extra-manifests\/: needs signed media: extra manifests are applied to the cluster as its administrator/);
    } finally {
      await s.cleanup();
    }
  });
});
