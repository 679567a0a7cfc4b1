// The simulator's network-operator proxy controller against the agent's own noProxy rule (src/cluster/no-proxy.ts):
// two transcriptions of cluster-network-operator's mergeUserSystemNoProxy, written apart, must agree on every
// case — IPv6 machine networks, a 0.0.0.0/0 machine network before and from 4.14, '*' — and the controller
// refuses what ValidateProxyConfig refuses, with the operator's message on ClusterOperator network.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import { createClusterClient } from '../../../src/cluster/client';
import { loadKubeconfig } from '../../../src/cluster/kubeconfig';
import { condition } from '../../../src/cluster/objects';
import { R } from '../../../src/cluster/resources';
import { effectiveNoProxy, readNoProxyInputs } from '../../../src/cluster/no-proxy';
import type { KubeObject } from '../../../src/cluster/types';
import type { ClusterOperator } from '../../../src/steps/rollouts';
import { withSimulator } from '../../sim/cluster/testing';
import type { Simulator } from '../../sim/index';
import { waitFor } from '../../unit/cluster/wait';

type ProxyObject = KubeObject & { status?: { noProxy?: string; httpProxy?: string } };

async function setProxy(sim: Simulator, spec: Record<string, unknown>): Promise<ProxyObject> {
  const p = sim.store.get(R.proxies, 'cluster')!;
  sim.store.update(R.proxies, { ...p, spec: { trustedCA: { name: '' }, ...spec } });
  let now: ProxyObject | undefined;
  await waitFor(() => {
    now = sim.store.get(R.proxies, 'cluster') as ProxyObject;
    return now.status?.httpProxy === spec.httpProxy;
  }, 'the proxy status');
  return now!;
}

async function agentNoProxy(sim: Simulator, user: string[], minor: number): Promise<string> {
  const client = createClusterClient(await loadKubeconfig((f) => readFile(f), sim.kubeconfigs.localhost), { timeoutMs: 5000 });
  try {
    return effectiveNoProxy(user, await readNoProxyInputs(client, minor));
  } finally {
    client.close();
  }
}

const setMachineNetworks = (sim: Simulator, cidrs: string[]) => {
  const cm = sim.store.get(R.configMaps, 'cluster-config-v1', 'kube-system')!;
  sim.store.update(R.configMaps, { ...cm, data: { 'install-config': stringify({ networking: { machineNetwork: cidrs.map((cidr) => ({ cidr })), networkType: 'OVNKubernetes' } }) } });
};

for (const [version, minor] of [['4.13.30', 13], ['4.14.12', 14]] as const) {
  test(`${version}: the operator's noProxy is the agent's, with an IPv6 machine network and 0.0.0.0/0`, async () => {
    await withSimulator({ version }, async (sim) => {
      setMachineNetworks(sim, ['192.168.111.0/24', 'fd00:111::/64', '0.0.0.0/0']);
      const user = ['.store42.example.com', '10.20.0.0/16', 'registry.local'];
      const proxy = await setProxy(sim, { httpProxy: 'http://proxy.example.com:3128', noProxy: user.join(',') });
      assert.equal(proxy.status?.noProxy, await agentNoProxy(sim, user, minor));
      assert.equal(proxy.status?.noProxy?.split(',').includes('0.0.0.0/0'), minor < 14, 'from 4.14 on 0.0.0.0/0 is left out');
    });
  });
}

test("'*' stays alone; an https:// httpProxy is refused on ClusterOperator network, and the status keeps what it had", async () => {
  await withSimulator({}, async (sim) => {
    const star = await setProxy(sim, { httpProxy: 'http://proxy.example.com:3128', noProxy: '*' });
    assert.equal(star.status?.noProxy, '*');
    assert.equal(await agentNoProxy(sim, ['*'], 16), '*');

    const degradedMessage = async () => {
      let message = '';
      await waitFor(() => {
        const c = condition(sim.store.get(R.clusterOperators, 'network') as ClusterOperator | undefined, 'Degraded');
        message = c?.status === 'True' ? `${c.reason}: ${c.message}` : '';
        return message !== '';
      }, 'network Degraded');
      return message;
    };
    const p = sim.store.get(R.proxies, 'cluster')!;
    sim.store.update(R.proxies, { ...p, spec: { httpProxy: 'https://proxy.example.com:3128' } });
    assert.equal(await degradedMessage(), "InvalidProxyConfig: The configuration is invalid for proxy 'cluster' (httpProxy requires a 'http' URI scheme). Use 'oc edit proxy.config.openshift.io cluster' to fix.");
    assert.equal((sim.store.get(R.proxies, 'cluster') as ProxyObject).status?.noProxy, '*', 'the status keeps what it had');
  });
});
