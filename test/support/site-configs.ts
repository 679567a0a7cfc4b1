// The two site-configs the site-time bench and the one-reboot test relocate with (issue 31): the minimal one a
// field team always carries (network, domain, pull secret, mirrors) and the full one — everything a site-config
// can carry: NTP, a proxy with its CA, SSH keys, a registry trust bundle, node labels, a kubeadmin password and
// extra manifests with a MachineConfig of the site's own. Both are files of a site-config volume.
import { parse, stringify } from 'yaml';
import { R } from '../../src/cluster/resources';
import { createCa } from '../sim/pki';
import type { Simulator } from '../sim/index';
import { siteConfigFor } from './scenario';
import { signedMedia } from './signed-media';

const MIRRORS = {
  imageDigestMirrors: [
    { source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'] },
    { source: 'quay.io/openshift-release-dev/ocp-v4.0-art-dev', mirrors: ['registry.store42.example.com:8443/ocp/art-dev'] },
  ],
};
const SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILIuxglGbYZ7y5raTu96j18a5ek7uLZT+hcz5uSD8a8G field-ops@example.com';
const SITE_MACHINECONFIG = {
  apiVersion: 'machineconfiguration.openshift.io/v1',
  kind: 'MachineConfig',
  metadata: { name: '50-master-store-motd', labels: { 'machineconfiguration.openshift.io/role': 'master' } },
  spec: { config: { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/motd', mode: 420, overwrite: true, contents: { source: 'data:,Store%2042%0A' } }] } } },
};
const STORE_NAMESPACE = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'store-apps' } };
const STORE_SETTINGS = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pos-settings', namespace: 'store-apps' }, data: { store: '42' } };

function document(sim: Simulator, extraSpec: Record<string, unknown>, settleStability: string): string {
  return siteConfigFor(sim, { extraSpec: { ...extraSpec, timeouts: { settleStability } } });
}

/** Network, domain, pull secret and digest mirrors. */
export function minimalSiteConfigFiles(sim: Simulator, settleStability = '2s'): Record<string, string> {
  return {
    'site-config.yaml': document(sim, { pullSecretFile: 'pull-secret.json', ...MIRRORS }, settleStability),
    'pull-secret.json': JSON.stringify({ auths: { 'registry.store42.example.com:8443': { auth: Buffer.from('store42:s3cr3t-bench').toString('base64') } } }),
  };
}

/**
 * Everything a site-config can carry, on signed media (a MachineConfig grants privileges: src/siteconfig/privileged.ts),
 * the signing key trusted in `nodeRoot`. The factory's cluster gets a kubeadmin Secret first (the installer
 * creates one; the simulator's seed has none), so the password is a change as at a real site.
 */
export function fullSiteConfigFiles(sim: Simulator, nodeRoot: string, settleStability = '2s'): Record<string, string> {
  if (!sim.store.get(R.secrets, 'kubeadmin', 'kube-system')) {
    sim.store.create(R.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'kubeadmin', namespace: 'kube-system' }, type: 'Opaque', data: { kubeadmin: Buffer.from(`$2a$10$${'F'.repeat(53)}`).toString('base64') } });
  }
  const minimal = minimalSiteConfigFiles(sim, settleStability);
  const base = parse(minimal['site-config.yaml']!) as { spec: Record<string, unknown> };
  const spec = {
    ...base.spec,
    additionalTrustBundleFile: 'registry-ca.pem',
    ntp: { servers: ['10.20.0.5'], pools: ['pool.store42.example.com'] },
    proxy: { httpProxy: 'http://proxy.store42.example.com:3128', httpsProxy: 'http://proxy.store42.example.com:3128', noProxy: ['.store42.example.com', '10.20.0.0/16'], trustedCAFile: 'proxy-ca.pem' },
    ssh: { authorizedKeys: [SSH_KEY], factoryKeys: 'replace' },
    nodeLabels: { set: { 'store.example.com/region': 'emea', 'store.example.com/store': '0042' } },
    kubeadminPassword: { hash: `$2y$10$${'Q'.repeat(53)}` },
    extraManifestFiles: ['extra-manifests/'],
  };
  const files = {
    ...minimal,
    'site-config.yaml': stringify({ apiVersion: 'sno-reconfigure.io/v1', kind: 'SiteConfig', metadata: { name: 'store-0042' }, spec }),
    'registry-ca.pem': createCa('registry.store42.example.com CA').certPem,
    'proxy-ca.pem': createCa('proxy.store42.example.com CA').certPem,
    'extra-manifests/10-store.yaml': `${stringify(STORE_NAMESPACE)}---\n${stringify(STORE_SETTINGS)}`,
    'extra-manifests/50-motd.yaml': stringify(SITE_MACHINECONFIG),
  };
  return signedMedia(nodeRoot, files, Object.keys(files).filter((f) => f !== 'site-config.yaml'));
}

/** What a relocation cost the cluster, counted from the simulator's events. */
export interface RelocationCounts {
  reboots: number;
  poolRollouts: number;
  kubeApiserverRevisions: number;
}

/** Counts node reboots, machine-config pool rollouts and kube-apiserver revisions from now on. */
export function countRelocation(sim: Simulator): { counts: RelocationCounts; stop(): void } {
  const counts: RelocationCounts = { reboots: 0, poolRollouts: 0, kubeApiserverRevisions: 0 };
  const onReboot = (e: { phase: string }) => {
    if (e.phase === 'down') counts.reboots++;
  };
  const onRollout = (e: { operator: string; phase: string }) => {
    if (e.phase !== 'start') return;
    if (e.operator === 'machine-config') counts.poolRollouts++;
    if (e.operator === 'kube-apiserver') counts.kubeApiserverRevisions++;
  };
  sim.events.on('reboot', onReboot);
  sim.events.on('rollout', onRollout);
  return {
    counts,
    stop() {
      sim.events.off('reboot', onReboot);
      sim.events.off('rollout', onRollout);
    },
  };
}
