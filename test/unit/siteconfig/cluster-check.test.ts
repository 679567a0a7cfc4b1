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
