// The agent's own objects stay its own (issue 36, finding 3): rows of manifests an extra-manifests file may and may
// not carry, and the list held to the names the steps really write.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { R } from '../../../src/cluster/resources';
import { FLEET_REPORT } from '../../../src/engine/fleet-report';
import { AGENT_OBJECTS, agentObjectProblem } from '../../../src/siteconfig/agent-objects';
import type { ManifestObject } from '../../../src/siteconfig/manifests';
import { CHRONY_MACHINECONFIG } from '../../../src/steps/chrony';
import { MIRROR_OBJECT_NAME } from '../../../src/steps/mirrors';
import { PULL_SECRET } from '../../../src/steps/pull-secret';
import { MASTER_POOL } from '../../../src/steps/rollouts';
import { SSH_MACHINECONFIG } from '../../../src/steps/ssh-key';
import { TRUST_CONFIGMAP } from '../../../src/steps/trust';
import { PROXY_CA_CONFIGMAP } from '../../../src/steps/proxy';
import { COMPONENT_ROUTES, CONFIG_NAMESPACE, DEFAULT_INGRESS_CONTROLLER, INGRESS_NAMESPACE, INGRESS_OPERATOR_NAMESPACE, SECRETS } from '../../../src/steps/domain/names';
import { HOST_PROBE } from '../../../src/steps/domain/routes';

const obj = (apiVersion: string, kind: string, name: string, namespace?: string): ManifestObject => ({ apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) } });

test('an extra manifest may not write an object the agent itself writes during the run', () => {
  const refused: [ManifestObject, RegExp][] = [
    [obj('machineconfiguration.openshift.io/v1', 'MachineConfigPool', 'master'), /pauses while it writes the node's configuration.*change it after the run/],
    [obj('machineconfiguration.openshift.io/v1', 'MachineConfig', '99-master-ssh'), /writes from spec\.ssh.*set spec\.ssh$/],
    [obj('config.openshift.io/v1', 'Ingress', 'cluster'), /new apps domain.*set spec\.baseDomain$/],
    [obj('config.openshift.io/v1', 'APIServer', 'cluster'), /certificates/],
    [obj('config.openshift.io/v1', 'Proxy', 'cluster'), /spec\.proxy/],
    [obj('v1', 'Secret', 'pull-secret', 'openshift-config'), /spec\.pullSecret/],
    [obj('v1', 'Secret', 'kubeadmin', 'kube-system'), /spec\.kubeadminPassword/],
    [obj('config.openshift.io/v1', 'ImageDigestMirrorSet', 'sno-reconfigure'), /spec\.imageDigestMirrors/],
  ];
  for (const [o, why] of refused) {
    const problem = agentObjectProblem(o);
    assert.match(problem ?? '', /^is an object the agent itself .*: an extra manifest, signed or not, must not change it during the run; /, `${o.kind} ${o.metadata.name}`);
    assert.match(problem ?? '', why);
  }
  const allowed = [
    obj('machineconfiguration.openshift.io/v1', 'MachineConfigPool', 'worker'),
    obj('machineconfiguration.openshift.io/v1', 'MachineConfig', '50-master-store-motd'),
    obj('v1', 'Secret', 'pull-secret', 'store-apps'),
    obj('v1', 'ConfigMap', 'pos-settings', 'store-apps'),
    // Same kind name, another API group: not the pool.
    obj('example.com/v1', 'MachineConfigPool', 'master'),
  ];
  for (const o of allowed) assert.equal(agentObjectProblem(o), undefined, `${o.kind} ${o.metadata.name}`);
});

// The seventeenth hostile re-test (Q3): core's logins in a MachineConfig of another name are merged in by the MCO beside
// 99-master-ssh, where neither the next site nor prepare takes them back.
test('an extra manifest may not give core SSH keys or a password in a MachineConfig of any name', () => {
  const withUsers = (name: string, users: unknown[]): ManifestObject => ({ ...obj('machineconfiguration.openshift.io/v1', 'MachineConfig', name), spec: { config: { ignition: { version: '3.2.0' }, passwd: { users } } } });
  for (const o of [withUsers('99-master-ssh-storea', [{ name: 'core', sshAuthorizedKeys: ['ssh-ed25519 AAAA store'] }]), withUsers('50-core-password', [{ name: 'core', passwordHash: '$6$x$y' }])]) {
    assert.equal(agentObjectProblem(o), "gives a user SSH keys or a password: the machine-config operator would add them beside the agent's 99-master-ssh, out of the next site's reach; set spec.ssh", o.metadata.name);
  }
  assert.equal(agentObjectProblem(withUsers('50-master-store-motd', [])), undefined, 'no users: nothing to refuse');
  assert.equal(agentObjectProblem({ ...withUsers('x', [{ name: 'core' }]), apiVersion: 'example.com/v1' }), undefined, 'another API group');
});

test('the list names what the steps write', () => {
  const has = (group: string, kind: string, name: string, namespace?: string) => AGENT_OBJECTS.some((h) => h.group === group && h.kind === kind && h.name === name && h.namespace === namespace);
  assert.ok(has(R.machineConfigPools.group, R.machineConfigPools.kind, MASTER_POOL));
  assert.ok(has(R.machineConfigs.group, R.machineConfigs.kind, SSH_MACHINECONFIG));
  assert.ok(has(R.machineConfigs.group, R.machineConfigs.kind, CHRONY_MACHINECONFIG));
  assert.ok(has('', 'Secret', PULL_SECRET.name, PULL_SECRET.namespace));
  for (const r of [R.imageDigestMirrorSets, R.imageTagMirrorSets, R.imageContentSourcePolicies]) assert.ok(has(r.group, r.kind, MIRROR_OBJECT_NAME), r.kind);
  for (const r of [R.apiServers, R.ingresses, R.proxies, R.images]) assert.ok(has(r.group, r.kind, 'cluster'), r.kind);
  assert.ok(has('', 'ConfigMap', FLEET_REPORT.name, FLEET_REPORT.namespace));
  // Issue 36, finding 3 (a hostile run replaced these through signed extra manifests): the trust and proxy CA
  // ConfigMaps, the certificate Secrets, the default IngressController and the component routes.
  assert.ok(has('', 'ConfigMap', TRUST_CONFIGMAP, CONFIG_NAMESPACE), TRUST_CONFIGMAP);
  assert.ok(has('', 'ConfigMap', PROXY_CA_CONFIGMAP, CONFIG_NAMESPACE), PROXY_CA_CONFIGMAP);
  for (const name of Object.values(SECRETS)) assert.ok(has('', 'Secret', name, CONFIG_NAMESPACE), name);
  assert.ok(has('', 'Secret', SECRETS.ingress, INGRESS_NAMESPACE));
  assert.ok(has(R.ingressControllers.group, R.ingressControllers.kind, DEFAULT_INGRESS_CONTROLLER, INGRESS_OPERATOR_NAMESPACE));
  for (const r of [...Object.values(COMPONENT_ROUTES), HOST_PROBE]) assert.ok(has(R.routes.group, R.routes.kind, r.name, r.namespace), `${r.namespace}/${r.name}`);
});
