import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { startScenario, siteConfigFor, type Scenario } from '../../support/scenario';
import { BUNDLE_PATH } from '../../support/bundle';
import { signedMedia } from '../../support/signed-media';
import { TRUSTED_KEYS_DIR } from '../../../src/paths';

let s: Scenario;
let configDir: string;
before(async () => {
  s = await startScenario();
  configDir = path.join(s.node.dir, 'media');
  mkdirSync(configDir);
  writeFileSync(path.join(configDir, 'site-config.yaml'), siteConfigFor(s.sim, { extraSpec: { imageDigestMirrors: [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'] }] } }));
});
after(async () => {
  await s?.cleanup();
});

/** Asynchronously: the simulator answers from this very process, so a synchronous spawn would starve it. */
function runPlan(dir: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BUNDLE_PATH, 'plan', dir, ...s.agentArgs], { env: s.node.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}
const plan = () => runPlan(configDir);

/** Host tools that change something; `plan` may only query. */
function changingCalls(): string[] {
  return s.node
    .calls()
    .filter((c) => (c.tool === 'nmstatectl' && c.args[0] !== 'show') || (c.tool === 'systemctl' && !['is-active', 'is-enabled', 'show'].includes(c.args[0]!)) || ['mount', 'umount', 'agetty'].includes(c.tool))
    .map((c) => `${c.tool} ${c.args.join(' ')}`);
}

test('plan before the API is up: node steps in detail, cluster steps say they need the API; nothing changes', async () => {
  const res = await plan();
  assert.equal(res.status, 0, res.stderr);
  assert.match(res.stdout, /Plan for site-config "store-0042" .* on node sno1-node — nothing is changed/);
  assert.match(res.stdout, /1\. Let the site log in over SSH \[ssh-early\]\n {3}- (?:write file \/var\/home\/core\/\.ssh\/authorized_keys\.d\/sno-reconfigure|nothing to change)\n/);
  assert.match(res.stdout, /2\. Apply the site network \[network\]\n {3}- apply network eno1 — at the next boot, before configure-ovs and nodeip-configuration \(the node reboots once for it when the media came after boot\): the network profiles saved as known good, nmstatectl apply with a checkpoint on eno1 holding [\d.]+\/24, .*; verify ping [\d.]+ \(the configured gateway\), ping .*; commit, or bring the known-good profiles back; configure-ovs then builds br-ex from the result\n/);
  assert.match(res.stdout, /3\. Check the node's clock \[clock\]\n {3}- nothing to change\n4\. Start kubelet \[kubelet\]\n {3}- delete file \/etc\/sno-reconfigure\/kubelet-hold/);
  assert.match(res.stdout, /Move the cluster to the new domain \[domain\]\n {3}requires the API to plan in detail/);
  assert.deepEqual(changingCalls(), []);
  assert.ok(!existsSync(path.join(s.node.root, 'var/lib/sno-reconfigure/journal.json')), 'no journal written');
});

test('plan with the API up: the cluster objects the run would change', async () => {
  s.sim.startKubelet();
  await s.sim.waitFor(() => s.sim.apiUp(), 60_000, 'API up');
  const res = await plan();
  assert.equal(res.status, 0, res.stderr);
  assert.match(res.stdout, /\[domain\]\n(?: {3}- .*\n)*? {3}- .*APIServer cluster/);
  assert.match(res.stdout, /Ingress cluster/);
  assert.match(res.stdout, /ImageDigestMirrorSet/);
  assert.match(res.stdout, /\n {3}- leave CatalogSource openshift-marketplace\/redhat-operators — pulls registry\.redhat\.io\/redhat\/redhat-operator-index:v4\.\d+ by tag; without an imageTagMirrors entry for it, it cannot pull at a disconnected site\n/);
  assert.deepEqual(changingCalls(), []);
  assert.ok(!existsSync(path.join(s.node.root, 'var/lib/sno-reconfigure/journal.json')), 'no journal written');
});

test('plan of an invalid site-config lists the problems and exits 1', async () => {
  const bad = path.join(s.node.dir, 'bad');
  mkdirSync(bad);
  writeFileSync(path.join(bad, 'site-config.yaml'), siteConfigFor(s.sim).replace('baseDomain: store42.example.com', 'baseDomian: store42.example.com'));
  const res = await runPlan(bad);
  assert.equal(res.status, 1);
  assert.match(res.stderr, /spec\.baseDomian: .*did you mean 'baseDomain'/);
});

// Issues 27, 36: unsigned media carry no extra manifests, whatever they hold; signed media may.
test('plan refuses extra manifests from unsigned media, naming the field and saying it needs signed media; signed media plan them', async () => {
  const mc = 'apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata: {name: 50-master-store-motd, labels: {machineconfiguration.openshift.io/role: master}}\nspec: {config: {ignition: {version: 3.2.0}}}\n';
  const files = { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { extraManifestFiles: ['mc.yaml'] } }), 'mc.yaml': mc };
  const unsigned = path.join(s.node.dir, 'privileged-unsigned');
  mkdirSync(unsigned);
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(unsigned, name), text);
  const refused = await runPlan(unsigned);
  assert.equal(refused.status, 1, refused.stdout);
  assert.match(refused.stderr, /spec\.extraManifestFiles: needs signed media: extra manifests are applied to the cluster as its administrator/);

  const signed = path.join(s.node.dir, 'privileged-signed');
  mkdirSync(signed);
  for (const [name, text] of Object.entries(signedMedia(s.node.root, files, ['mc.yaml']))) writeFileSync(path.join(signed, name), text);
  try {
    const res = await runPlan(signed);
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /MachineConfig 50-master-store-motd/);
  } finally {
    rmSync(path.join(s.node.root, TRUSTED_KEYS_DIR), { recursive: true });
  }
});
