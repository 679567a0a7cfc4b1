import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { checkAgainstCluster } from '../../../src/siteconfig/cluster-check';
import { DEFAULT_TIMEOUTS, type ResolvedSiteConfig } from '../../../src/siteconfig/types';
import { CORPUS_DIR } from './corpus';

const pki = (f: string) => readFileSync(path.join(CORPUS_DIR, '_pki', f), 'utf8');

function site(extra: Partial<ResolvedSiteConfig> = {}): ResolvedSiteConfig {
  return { name: 'store', baseDomain: 'store42.example.com', pullSecretMode: 'merge', imageDigestMirrors: [], certificates: {}, timeouts: DEFAULT_TIMEOUTS, ...extra };
}

test('the same names as the cluster pass', () => {
  assert.deepEqual(checkAgainstCluster(site({ clusterName: 'sno1', hostname: 'sno1-node' }), { clusterName: 'sno1', nodeName: 'sno1-node' }), []);
  assert.deepEqual(checkAgainstCluster(site(), { clusterName: 'sno1', nodeName: 'sno1-node' }), []);
});

test('renaming the cluster or the node is refused: unsupported by OpenShift', () => {
  const problems = checkAgainstCluster(site({ clusterName: 'sno2', hostname: 'other' }), { clusterName: 'sno1', nodeName: 'sno1-node' });
  assert.deepEqual(problems.map((p) => p.path), ['spec.clusterName', 'spec.hostname']);
  assert.match(problems[0]!.message, /renaming a cluster is not supported by OpenShift/);
  assert.match(problems[1]!.message, /changing the node's host name is not supported by OpenShift/);
});

test('an nmstate host name other than the node name is refused', () => {
  const s = site({ network: { nmstate: { hostname: { config: 'new-name' } }, verify: { ping: [], resolve: [] } } });
  const problems = checkAgainstCluster(s, { clusterName: 'sno1', nodeName: 'sno1-node' });
  assert.deepEqual(problems.map((p) => p.path), ['spec.network.nmstate.hostname.config']);
  assert.deepEqual(checkAgainstCluster(s, { clusterName: 'sno1', nodeName: 'new-name' }), []);
});

test('unknown cluster facts (undefined or empty) skip the comparisons', () => {
  assert.deepEqual(checkAgainstCluster(site({ clusterName: 'sno2', hostname: 'x' }), { nodeName: '' }), []);
});

test('without spec.clusterName, names and certificates are checked against the real cluster name', () => {
  const certs = { api: { certPem: pki('api.crt'), keyPem: pki('api.key') }, ingress: { certPem: pki('apps.crt'), keyPem: pki('apps.key') } };
  assert.deepEqual(checkAgainstCluster(site({ certificates: certs }), { clusterName: 'sno1', nodeName: 'n' }), []);
  const wrong = checkAgainstCluster(site({ certificates: certs }), { clusterName: 'edge7', nodeName: 'n' });
  assert.deepEqual(wrong.map((p) => p.path), ['spec.certificates.api.certFile', 'spec.certificates.ingress.certFile']);
  assert.match(wrong[0]!.message, /does not cover api\.edge7\.store42\.example\.com/);
  const longDomain = Array.from({ length: 4 }, () => 'd'.repeat(60)).join('.');
  const tooLong = checkAgainstCluster(site({ baseDomain: longDomain }), { clusterName: 'c'.repeat(20), nodeName: 'n' });
  assert.deepEqual(tooLong.map((p) => p.path), ['spec.baseDomain']);
});

test('a kubeadmin hash is refused where the OAuth server would ignore the Secret (library-go bootstrapauthenticator: not re-creatable after an hour)', () => {
  const installed = '2026-08-01T10:00:00Z';
  const at = (iso: string) => Date.parse(iso);
  const rows: { name: string; secretCreated?: string; now: string; refused: RegExp | undefined }[] = [
    { name: 'the installer\'s Secret, updated in place', secretCreated: '2026-08-01T10:20:00Z', now: '2026-11-01T00:00:00Z', refused: undefined },
    { name: 'a Secret exactly an hour younger than kube-system', secretCreated: '2026-08-01T11:00:00Z', now: '2026-11-01T00:00:00Z', refused: undefined },
    { name: 'a Secret re-created at the factory', secretCreated: '2026-09-15T08:00:00Z', now: '2026-11-01T00:00:00Z', refused: /re-created on 2026-09-15, more than an hour after this cluster was installed \(2026-08-01\)/ },
    { name: 'no Secret, the cluster months old', now: '2026-11-01T00:00:00Z', refused: /has no Secret kube-system\/kubeadmin .* kubeadmin cannot come back/ },
    { name: 'no Secret, within the cluster\'s first hour', now: '2026-08-01T10:30:00Z', refused: undefined },
  ];
  for (const row of rows) {
    const kubeadmin = { kubeSystemCreated: installed, ...(row.secretCreated ? { secretCreated: row.secretCreated } : {}), now: at(row.now) };
    const problems = checkAgainstCluster(site({ kubeadminPassword: { hash: `$2y$10$${'Q'.repeat(53)}` } }), { clusterName: 'sno1', nodeName: 'sno1-node', kubeadmin });
    if (!row.refused) assert.deepEqual(problems, [], row.name);
    else {
      assert.deepEqual(problems.map((p) => p.path), ['spec.kubeadminPassword.hash'], row.name);
      assert.match(problems[0]!.message, row.refused, row.name);
      assert.match(problems[0]!.message, /log in with the hand-off kubeconfig or an identity provider/, row.name);
    }
    // Removing kubeadmin is always possible.
    assert.deepEqual(checkAgainstCluster(site({ kubeadminPassword: { remove: true } }), { clusterName: 'sno1', nodeName: 'sno1-node', kubeadmin }), [], row.name);
  }
});

test('image-based media: the refusal names kubeadmin_password_hash, the field the person wrote', () => {
  const kubeadmin = { kubeSystemCreated: '2026-08-01T10:00:00Z', now: Date.parse('2026-11-01T00:00:00Z') };
  const problems = checkAgainstCluster(site({ imageBased: {}, kubeadminPassword: { hash: `$2y$10$${'Q'.repeat(53)}` } }), { clusterName: 'sno1', nodeName: 'sno1-node', kubeadmin });
  assert.deepEqual(problems.map((p) => p.path), ['kubeadmin_password_hash']);
});
