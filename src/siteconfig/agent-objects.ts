// The agent's own objects stay its own (DESIGN.md section 4; issue 36, finding 3): an extra manifest — signed or
// not — may not write an object the agent itself writes during the run. A manifest of the master
// MachineConfigPool with `paused: true` (replace drops the agent's annotation) left the pool paused for good, and
// a replace of the Ingress config or the pull secret would undo the agent's own change mid-run. Each row names the
// site-config field that sets the object instead. The names are the steps' own (src/steps: pool-hold.ts's
// MASTER_POOL, ssh-key.ts, chrony.ts, pull-secret.ts, kubeadmin.ts, mirrors.ts, domain/ (names.ts's SECRETS,
// COMPONENT_ROUTES and DEFAULT_INGRESS_CONTROLLER, routes.ts's HOST_PROBE), trust.ts, proxy.ts,
// engine/fleet-report.ts: siteconfig sits below the steps, so it cannot import them); test/unit/siteconfig/
// agent-objects.test.ts holds this list to those constants, and to the objects a whole simulated run writes.
import type { ManifestObject } from './manifests';

const MCO = 'machineconfiguration.openshift.io';
const CONFIG = 'config.openshift.io';
const ROUTE = 'route.openshift.io';

interface Held {
  group: string;
  kind: string;
  namespace?: string;
  name: string;
  /** What the agent does with it, after "which the agent itself …". */
  does: string;
  /** What to use instead. */
  instead: string;
}

const AFTER_RUN = 'change it after the run';

export const AGENT_OBJECTS: readonly Held[] = [
  { group: MCO, kind: 'MachineConfigPool', name: 'master', does: 'pauses while it writes the node\'s configuration and unpauses after it (a manifest could pause it for good, or unpause it mid-run and cost a reboot per change)', instead: AFTER_RUN },
  { group: MCO, kind: 'MachineConfig', name: '99-master-ssh', does: 'writes from spec.ssh', instead: 'set spec.ssh' },
  { group: MCO, kind: 'MachineConfig', name: '99-master-chrony', does: 'writes from spec.ntp', instead: 'set spec.ntp' },
  { group: CONFIG, kind: 'APIServer', name: 'cluster', does: 'writes for the new domain\'s certificates', instead: 'set spec.baseDomain and spec.certificates' },
  { group: CONFIG, kind: 'Ingress', name: 'cluster', does: 'writes for the new apps domain', instead: 'set spec.baseDomain' },
  { group: CONFIG, kind: 'Proxy', name: 'cluster', does: 'writes from spec.proxy and spec.additionalTrustBundle', instead: 'set spec.proxy' },
  { group: CONFIG, kind: 'Image', name: 'cluster', does: 'writes for the registry CA', instead: 'set spec.additionalTrustBundle' },
  { group: '', kind: 'Secret', namespace: 'openshift-config', name: 'pull-secret', does: 'writes from spec.pullSecret', instead: 'set spec.pullSecret' },
  { group: '', kind: 'Secret', namespace: 'kube-system', name: 'kubeadmin', does: 'writes from spec.kubeadminPassword', instead: 'set spec.kubeadminPassword' },
  { group: CONFIG, kind: 'ImageDigestMirrorSet', name: 'sno-reconfigure', does: 'writes from spec.imageDigestMirrors', instead: 'set spec.imageDigestMirrors' },
  { group: CONFIG, kind: 'ImageTagMirrorSet', name: 'sno-reconfigure', does: 'writes from spec.imageTagMirrors', instead: 'set spec.imageTagMirrors' },
  { group: 'operator.openshift.io', kind: 'ImageContentSourcePolicy', name: 'sno-reconfigure', does: 'writes from spec.imageDigestMirrors', instead: 'set spec.imageDigestMirrors' },
  { group: '', kind: 'ConfigMap', namespace: 'openshift-config', name: 'sno-reconfigure-registry-cas', does: 'writes from spec.additionalTrustBundle for the registries', instead: 'set spec.additionalTrustBundle' },
  { group: '', kind: 'ConfigMap', namespace: 'openshift-config', name: 'sno-reconfigure-proxy-ca', does: 'writes from spec.proxy and spec.additionalTrustBundle', instead: 'set spec.proxy' },
  ...(['api', 'ingress', 'oauth'] as const).map((role) => ({ group: '', kind: 'Secret', namespace: 'openshift-config', name: `sno-reconfigure-${role}-cert`, does: 'writes with the new domain\'s certificate and key', instead: 'set spec.certificates' })),
  { group: '', kind: 'Secret', namespace: 'openshift-ingress', name: 'sno-reconfigure-ingress-cert', does: 'writes with the new domain\'s certificate and key', instead: 'set spec.certificates' },
  { group: 'operator.openshift.io', kind: 'IngressController', namespace: 'openshift-ingress-operator', name: 'default', does: 'writes for the new domain\'s default certificate', instead: 'set spec.certificates' },
  { group: ROUTE, kind: 'Route', namespace: 'openshift-console', name: 'console', does: 'moves to the new apps domain (through the Ingress config\'s componentRoutes)', instead: 'set spec.baseDomain' },
  { group: ROUTE, kind: 'Route', namespace: 'openshift-console', name: 'downloads', does: 'moves to the new apps domain (through the Ingress config\'s componentRoutes)', instead: 'set spec.baseDomain' },
  { group: ROUTE, kind: 'Route', namespace: 'openshift-authentication', name: 'oauth-openshift', does: 'moves to the new apps domain (through the Ingress config\'s componentRoutes)', instead: 'set spec.baseDomain' },
  { group: ROUTE, kind: 'Route', namespace: 'openshift-config', name: 'sno-reconfigure-host-probe', does: 'creates for a moment to learn the new domain\'s route hosts', instead: 'leave it to the agent' },
  { group: '', kind: 'Namespace', name: 'sno-reconfigure', does: 'keeps its fleet report in', instead: 'leave it to the agent' },
  { group: '', kind: 'ConfigMap', namespace: 'sno-reconfigure', name: 'report', does: 'writes as its fleet report', instead: 'leave it to the agent' },
];

const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

/** Why an extra manifest may not carry `object` (the agent writes it itself during the run), or undefined. */
export function agentObjectProblem(object: ManifestObject): string | undefined {
  // core's logins anywhere else are merged in by the MCO beside 99-master-ssh, out of the next site's reach (src/steps/ssh-key.ts).
  const users = (object.spec as { config?: { passwd?: { users?: unknown } } } | undefined)?.config?.passwd?.users;
  if (object.kind === 'MachineConfig' && groupOf(object.apiVersion) === MCO && Array.isArray(users) && users.length > 0) {
    return "gives a user SSH keys or a password: the machine-config operator would add them beside the agent's 99-master-ssh, out of the next site's reach; set spec.ssh";
  }
  const held = AGENT_OBJECTS.find((h) => h.kind === object.kind && h.group === groupOf(object.apiVersion) && h.name === object.metadata.name && (h.namespace === undefined || h.namespace === object.metadata.namespace));
  if (!held) return undefined;
  return `is an object the agent itself ${held.does}: an extra manifest, signed or not, must not change it during the run; ${held.instead}`;
}
