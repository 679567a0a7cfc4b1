// The agent's watch (src/cluster/watch.ts) through a real kube-apiserver restart in the simulator: a new
// static-pod revision replaces the only kube-apiserver pod, the new process builds its watch cache from a
// fresh LIST, and the agent's watch from the old resourceVersion is answered 410 — so it must relist
// (kubernetes/kubernetes release-1.29 staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go).
import { test } from 'node:test';
import { readFile } from 'node:fs/promises';
import assert from 'node:assert/strict';
import { createClusterClient } from '../../../src/cluster/client';
import { loadKubeconfig } from '../../../src/cluster/kubeconfig';
import { R } from '../../../src/cluster/resources';
import type { KubeObject, WatchEvent } from '../../../src/cluster/types';
import { issueServerCert } from '../../sim/pki';
import { NEW_DOMAIN, tlsSecret, withSimulator } from '../../sim/cluster/testing';
import { waitFor } from '../../unit/cluster/wait';

test('a kube-apiserver rollout restarts the API: the agent watch gets 410 and relists, then follows new changes', async () => {
  await withSimulator({ durations: { kubeApiserverRollout: 60_000, kubeApiserverRestartOutage: 30_000 } }, async (sim, admin) => {
    const client = createClusterClient(await loadKubeconfig((f) => readFile(f), sim.kubeconfigs.localhost), { timeoutMs: 5000, watchBackoff: { initialMs: 5, maxMs: 50 }, watchTimeoutSeconds: 60 });
    const ns = 'openshift-config-managed';
    const ac = new AbortController();
    try {
      await client.create(R.configMaps, { metadata: { name: 'r-1', namespace: ns } });
      const events: WatchEvent<KubeObject>[] = [];
      const done = client.watch<KubeObject>(R.configMaps, { namespace: ns, signal: ac.signal }, (e) => {
        events.push(e);
      });
      await waitFor(() => events.some((e) => e.object.metadata?.name === 'r-1'), 'the initial list');

      // While the new revision's pod replaces the old one, the cluster keeps changing (etcd is up).
      sim.events.on('api', (e: { up: boolean }) => {
        if (!e.up) void sim.api.setUp(false).then(() => sim.store.create(R.configMaps, { metadata: { name: 'r-while-down', namespace: ns } }));
      });
      const api = `api.${sim.options.clusterName}.${NEW_DOMAIN}`;
      await admin.create(R.secrets, tlsSecret('openshift-config', 'api-new', issueServerCert(sim.signers.lbSigner, { dnsNames: [api] })));
      await admin.mergePatch(R.apiServers, 'cluster', { spec: { servingCerts: { namedCertificates: [{ names: [api], servingCertificate: { name: 'api-new' } }] } } });
      await waitFor(() => events.some((e) => e.object.metadata?.name === 'r-while-down'), 'the change made while the API was restarting');

      const seen = (name: string) => events.filter((e) => e.type === 'ADDED' && e.object.metadata?.name === name).length;
      assert.equal(seen('r-1'), 2, 'r-1 comes again from the relist after the 410');
      const lists = sim.api.requests.filter((r) => r.path === `/api/v1/namespaces/${ns}/configmaps` && r.method === 'GET' && !/watch=/.test(r.query));
      assert.equal(lists.length, 2, 'one initial list and one relist after the restart');

      await client.create(R.configMaps, { metadata: { name: 'r-after', namespace: ns } });
      await waitFor(() => events.some((e) => e.object.metadata?.name === 'r-after'), 'watching again after the relist');
      ac.abort();
      await done;
    } finally {
      ac.abort();
      client.close();
    }
  });
});
