// Image-based install's manifest.json as a site-config. The fixture's keys come from the table of the Go struct
// image-based install writes (test/fixtures/image-based/seed-reconfiguration-keys.ts, facts of lifecycle-agent
// api/seedreconfig/seedreconfig.go at 0e1bf18), never from our own types: a key the table gains makes this test
// fail until the translation accounts for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SEED_RECONFIGURATION_STRUCTS, seedKeys } from '../../fixtures/image-based/seed-reconfiguration-keys';
import { chronySources, fromSeedReconfiguration, IGNORED_SEED_FIELDS, isSeedReconfiguration } from '../../../src/siteconfig/seed-reconfiguration';

const PULL = { auths: { 'registry.store42.example.com:8443': { auth: Buffer.from('u:p').toString('base64') } } };
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILIuxglGbYZ7y5raTu96j18a5ek7uLZT+hcz5uSD8a8G field-ops@example.com';
const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

/** A value for every key of SeedReconfiguration, as openshift-install image-based create config-image would write it. */
const VALUES: Record<string, unknown> = {
  api_version: 1,
  base_domain: 'store42.example.com',
  cluster_name: 'sno1',
  cluster_id: '5f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0',
  infra_id: 'sno1-x7k2p',
  node_ip: '192.168.111.20',
  node_ips: ['192.168.111.20'],
  release_registry: 'quay.io',
  hostname: 'sno1-node',
  KubeconfigCryptoRetention: { KubeAPICrypto: { ServingCrypto: { localhost_signer_private_key: 'PEM' } } },
  ssh_key: KEY,
  server_ssh_keys: [],
  kubeadmin_password_hash: '$2a$10$abcdefghijklmnopqrstuuY5y2OQKYn0vXyvCEmE/Hh0YhQF8Zr1u',
  raw_nm_state_config: 'interfaces:\n- name: eno1\n  type: ethernet\n  state: up\n  ipv4: {enabled: true, dhcp: false, address: [{ip: 192.168.111.20, prefix-length: 24}]}\n',
  pull_secret: JSON.stringify(PULL),
  machine_network: '192.168.111.0/24',
  machine_networks: ['192.168.111.0/24'],
  proxy: { httpProxy: 'http://proxy.store42.example.com:3128', httpsProxy: 'http://proxy.store42.example.com:3128', noProxy: '.store42.example.com,10.20.0.0/16' },
  status_proxy: { httpProxy: 'http://proxy.store42.example.com:3128', noProxy: '.cluster.local,.svc' },
  install_config: 'apiVersion: v1\nmetadata: {name: sno1}\n',
  chrony_config: 'pool 2.rhel.pool.ntp.org iburst\nserver 10.20.0.5 iburst\ndriftfile /var/lib/chrony/drift\n',
  additionalTrustBundle: { userCaBundle: CA, proxyConfigmapName: 'user-ca-bundle', proxyConfigmapBundle: CA },
  node_labels: { 'store.example.com/region': 'emea' },
};

/** The JSON type encoding/json writes for a Go type of the table. */
function jsonTypeOf(goType: string): string {
  if (goType === 'int') return 'number';
  if (goType === 'string' || goType === 'PEM') return 'string';
  return goType.startsWith('[]') ? 'array' : 'object';
}

test('every key of the Go SeedReconfiguration has a fixture value of its JSON type, and the translation maps, checks or names it', () => {
  const keys = seedKeys('SeedReconfiguration');
  assert.ok(keys.length >= 23, `found ${keys.length} keys`);
  assert.deepEqual(keys.filter((k) => !(k in VALUES)), [], 'a key upstream has that the fixture (and the translation) does not know');
  const typed = SEED_RECONFIGURATION_STRUCTS.SeedReconfiguration as Record<string, { type: string }>;
  assert.deepEqual(
    keys.filter((k) => (Array.isArray(VALUES[k]) ? 'array' : typeof VALUES[k]) !== jsonTypeOf(typed[k]!.type)),
    [],
    'fixture values whose JSON type is not the Go type\'s',
  );
  for (const [struct, field] of [['Proxy', 'proxy'], ['AdditionalTrustBundle', 'additionalTrustBundle']] as const) {
    assert.deepEqual(seedKeys(struct).filter((k) => !(k in (VALUES[field] as object))), [], `${struct}'s keys`);
  }
  const t = fromSeedReconfiguration(VALUES, {}, false);
  assert.deepEqual(t.problems, []);
  const spec = t.document.spec as Record<string, unknown>;
  const mapped = ['base_domain', 'cluster_name', 'hostname', 'ssh_key', 'kubeadmin_password_hash', 'raw_nm_state_config', 'pull_secret', 'proxy', 'chrony_config', 'additionalTrustBundle', 'node_labels'];
  const checked = ['api_version', 'cluster_id', 'node_ip', 'node_ips'];
  assert.deepEqual(keys.filter((k) => ![...mapped, ...checked, ...Object.keys(IGNORED_SEED_FIELDS)].includes(k)), [], 'keys neither mapped, checked nor ignored');
  assert.deepEqual(spec, {
    baseDomain: 'store42.example.com',
    clusterName: 'sno1',
    hostname: 'sno1-node',
    network: { nmstate: { interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.111.20', 'prefix-length': 24 }] } }] } },
    pullSecret: PULL,
    pullSecretMode: 'replace',
    ssh: { authorizedKeys: [KEY], factoryKeys: 'replace' },
    kubeadminPassword: { hash: VALUES.kubeadmin_password_hash },
    proxy: { httpProxy: 'http://proxy.store42.example.com:3128', httpsProxy: 'http://proxy.store42.example.com:3128', noProxy: ['.store42.example.com', '10.20.0.0/16'], trustedCA: CA },
    additionalTrustBundle: CA,
    // RHEL's public pool is openshift-install's boilerplate: not applied, with a warning (issue 29).
    ntp: { servers: ['10.20.0.5'] },
    nodeLabels: { set: { 'store.example.com/region': 'emea' } },
  });
  assert.deepEqual(t.identity, { nodeIPs: ['192.168.111.20'], clusterID: '5f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0' });
  assert.match(t.warnings.find((w) => w.path === 'chrony_config')?.message ?? '', /pool 2\.rhel\.pool\.ntp\.org is RHEL's public pool, which openshift-install writes whatever the site named: not applied/);
  assert.deepEqual(t.warnings.map((w) => w.path).sort(), ['KubeconfigCryptoRetention', 'chrony_config', 'infra_id', 'install_config', 'machine_network', 'machine_networks', 'release_registry', 'status_proxy']);
});

test('as image-based install does: no kubeadmin hash deletes kubeadmin; node_ip when node_ips is empty; another api_version is refused', () => {
  const t = fromSeedReconfiguration({ api_version: 1, base_domain: 'x.example.com', node_ip: '10.0.0.5' }, {}, true);
  const spec = t.document.spec as Record<string, unknown>;
  assert.deepEqual(spec.kubeadminPassword, { remove: true });
  assert.deepEqual(spec.extraManifestFiles, ['../extra-manifests/']);
  assert.deepEqual(t.identity, { nodeIPs: ['10.0.0.5'] });
  assert.deepEqual(fromSeedReconfiguration({ api_version: 2, base_domain: 'x.example.com' }, {}, false).problems, [{ path: 'api_version', message: "is 2: only version 1 of image-based install's SeedReconfiguration is understood" }]);
});

test('the generated mirror sets of cluster-configuration/manifests become imageDigestMirrors; other objects there are refused', () => {
  const idms = [{ apiVersion: 'config.openshift.io/v1', kind: 'ImageDigestMirrorSet', metadata: { name: 'image-digest-mirror' }, spec: { imageDigestMirrors: [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'] }] } }];
  const ssh = { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name: '99-master-ssh' }, spec: {} };
  const t = fromSeedReconfiguration({ api_version: 1, base_domain: 'x.example.com' }, { 'idms.json': JSON.stringify(idms), 'ssh.json': JSON.stringify(ssh), 'other.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: n}\n' }, false);
  assert.deepEqual((t.document.spec as Record<string, unknown>).imageDigestMirrors, [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'] }]);
  assert.deepEqual(t.problems, [{ path: 'cluster-configuration/manifests/other.yaml', message: 'holds ConfigMap c: only mirror sets are read from there (put other objects in extra-manifests/)' }]);
  assert.equal(isSeedReconfiguration({ api_version: 1 }), true);
  assert.equal(isSeedReconfiguration({ apiVersion: 'sno-reconfigure.io/v1', api_version: 1 }), false);
  assert.deepEqual(chronySources('# comment\nserver a.example.com iburst\n  pool b.example.com\nmakestep 1 3\n'), { servers: ['a.example.com'], pools: ['b.example.com'] });
});

// The fourth hostile re-test of issue 36: what is not read of an object there passed validate without a word.
test('what is not read of an object in cluster-configuration/manifests is named as not applied; the empty fields Go writes are not', () => {
  // As openshift/api's MachineConfigSpec serialises ForAuthorizedKeys' object: the fields without omitempty, empty.
  const generated = { osImageURL: '', config: { ignition: { version: '3.2.0' }, passwd: { users: [{ name: 'core', sshAuthorizedKeys: ['ssh-ed25519 AAAA x'] }] } }, kernelArguments: null, extensions: null, fips: false, kernelType: '' };
  const ssh = (spec: Record<string, unknown>) => ({ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name: '99-master-ssh' }, spec });
  const quiet = fromSeedReconfiguration({ api_version: 1, base_domain: 'x.example.com' }, { 'ssh.json': JSON.stringify(ssh(generated)) }, false);
  assert.deepEqual([quiet.problems, quiet.warnings], [[], []]);
  const more = ssh({ ...generated, kernelArguments: ['nosmt'], config: { ...generated.config, storage: { files: [{ path: '/etc/x', contents: { source: 'data:,x' } }] } } });
  const idms = { apiVersion: 'config.openshift.io/v1', kind: 'ImageDigestMirrorSet', metadata: { name: 'image-digest-mirror' }, spec: { imageDigestMirrors: [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'] }], imageTagMirrors: [{ source: 'quay.io/x', mirrors: ['registry.store42.example.com:8443/x'] }] } };
  const t = fromSeedReconfiguration({ api_version: 1, base_domain: 'x.example.com' }, { 'ssh.json': JSON.stringify(more), 'idms.yaml': `- ${JSON.stringify(idms)}\n` }, false);
  assert.deepEqual(t.problems, []);
  assert.deepEqual(t.warnings, [
    { path: 'cluster-configuration/manifests/ssh.json', message: "MachineConfig 99-master-ssh: spec.kernelArguments, spec.config.storage are not applied: the SSH key is taken from manifest.json's ssh_key; put other objects in extra-manifests/" },
    { path: 'cluster-configuration/manifests/idms.yaml', message: '[0]: ImageDigestMirrorSet image-digest-mirror: spec.imageTagMirrors is not applied: only spec.imageDigestMirrors is read from an ImageDigestMirrorSet here (tag mirrors need signed media and spec.imageTagMirrors in a site-config)' },
  ]);
});

// openshift-install image-based create config-image writes the install-config's imageDigestSources as they are,
// a JSON list of {source, mirrors, sourcePolicy} — not mirror-set objects — to
// cluster-configuration/manifests/image-digest-sources.json (openshift/installer
// pkg/asset/imagebased/configimage/imagedigestsources.go at 58bbbe29…; the keys are the json tags of
// pkg/types/installconfig.go ImageDigestSource, where sourcePolicy has no omitempty).
test("openshift-install's image-digest-sources.json becomes imageDigestMirrors; a source policy is named as not applied", () => {
  const written = [
    { source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'], sourcePolicy: '' },
    { source: 'quay.io/openshift-release-dev/ocp-v4.0-art-dev', mirrors: ['registry.store42.example.com:8443/ocp/art'], sourcePolicy: 'NeverContactSource' },
  ];
  const t = fromSeedReconfiguration({ api_version: 1, base_domain: 'x.example.com' }, { 'image-digest-sources.json': JSON.stringify(written) }, false);
  assert.deepEqual(t.problems, []);
  assert.deepEqual((t.document.spec as Record<string, unknown>).imageDigestMirrors, written.map(({ source, mirrors }) => ({ source, mirrors })));
  assert.deepEqual(t.warnings, [
    {
      path: 'cluster-configuration/manifests/image-digest-sources.json',
      message: "[1].sourcePolicy: NeverContactSource is not applied: the agent's mirror set takes no source policy, so pulls may still try quay.io/openshift-release-dev/ocp-v4.0-art-dev",
    },
  ]);
  const unknown = fromSeedReconfiguration({ api_version: 1, base_domain: 'x.example.com' }, { 'image-digest-sources.json': '[{"source":"a.example.com","wrongField":"x"}]' }, false);
  assert.deepEqual(unknown.problems, [{ path: 'cluster-configuration/manifests/image-digest-sources.json', message: "[0]: unknown field 'wrongField' (an install-config imageDigestSources entry has source, mirrors and sourcePolicy)" }]);
});
