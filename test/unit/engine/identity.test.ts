// The cluster's name without the API (src/engine/identity.ts): a rename must be refused before any change,
// also on a node that has no factory baseline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { clusterNameOf } from '../../../src/engine/identity';

test('cluster name: the baseline first, else the bootstrap kubeconfig server (api-int. or api.), else unknown', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'identity-'));
  try {
    const host = new LocalHost({ root });
    const kubeconfig = (server: string) => {
      mkdirSync(path.join(root, 'etc/kubernetes'), { recursive: true });
      writeFileSync(path.join(root, 'etc/kubernetes/kubeconfig'), `apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: eA==\n    server: ${server}\n  name: local\n`);
    };
    assert.equal(await clusterNameOf(host, {}), undefined, 'nothing to go by');
    kubeconfig('https://api-int.sno1.factory.example.com:6443');
    assert.equal(await clusterNameOf(host, {}), 'sno1');
    assert.equal(await clusterNameOf(host, { clusterName: 'from-baseline' }), 'from-baseline');
    kubeconfig('"https://api.edge-7.factory.example.com:6443"');
    assert.equal(await clusterNameOf(host, {}), 'edge-7');
    kubeconfig('https://10.0.0.5:6443');
    assert.equal(await clusterNameOf(host, {}), undefined, 'an address says nothing about the name');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
