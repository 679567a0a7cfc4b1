// Objects from extra manifests that grant privileges on the node or the cluster: named in `validate` and
// `plan` whatever the signing, and refused from unsigned media (issue 27: a stick in a store's back room must not
// become a root shell). What counts, with its source:
// - MachineConfig, KubeletConfig, ContainerRuntimeConfig: the machine-config-operator writes their files and
//   systemd units to the node as root (openshift/machine-config-operator 9494c09 docs/MachineConfig.md).
// - RBAC bindings to broad subjects or admin roles, and roles that grant everything or escalation verbs:
//   kubernetes/website 037ed19 content/en/docs/concepts/security/rbac-good-practices.md ("Least privilege":
//   wildcards, cluster-admin; "Hardening": system:unauthenticated; "privilege escalation risks": escalate, bind,
//   impersonate, workload creation, hostPath PersistentVolumes, nodes/proxy, admission webhooks); the user-facing
//   roles cluster-admin, admin and edit (content/en/docs/reference/access-authn-authz/rbac.md "User-facing roles").
// - Privileged workloads: what the Baseline Pod Security Standard forbids — privileged containers, host
//   namespaces (hostNetwork, hostPID, hostIPC), hostPath volumes, capabilities beyond its list
//   (kubernetes/website 7a42986 content/en/docs/concepts/security/pod-security-standards.md, "Baseline").
// - OpenShift SecurityContextConstraints, and grants of them (the `use` verb on securitycontextconstraints, or the
//   system:openshift:scc:<name> cluster role that `oc adm policy add-scc-to-user` binds): they decide which pods
//   may run privileged (docs.openshift.com container-platform 4.3 authentication/managing-security-context-constraints).
// - Admission webhooks and aggregated API services: they see (and may change) every object sent to the API.
// A CustomResourceDefinition only adds a type (who may use it is RBAC's), so it is not privileged — unless it
// converts through a webhook (spec.conversion.strategy Webhook), which sends every object of its kind to a service.
import type { ManifestObject } from './manifests';

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');
const RBAC = 'rbac.authorization.k8s.io';

/** Groups (and the anonymous user) that stand for everyone, or every service account. */
// Word lists, split at run time: the node bundle's budget counts every quote and comma.
const words = (s: string) => new Set(s.split(' '));
const BROAD_SUBJECTS = words('Group:system:authenticated Group:system:unauthenticated Group:system:serviceaccounts Group:system:authenticated:oauth User:system:anonymous');
const ADMIN_ROLES = words('cluster-admin admin edit');
const ESCALATION_VERBS = words('escalate bind impersonate');
/** Capabilities the Baseline policy allows to add, compared as written (kubernetes/kubernetes 003effe
 * staging/src/k8s.io/pod-security-admission/policy/check_capabilities_baseline.go, capabilities_allowed_1_0). */
const BASELINE_CAPABILITIES = words('AUDIT_WRITE CHOWN DAC_OVERRIDE FOWNER FSETID KILL MKNOD NET_BIND_SERVICE SETFCAP SETGID SETPCAP SETUID SYS_CHROOT');
const WORKLOADS = words('Pod Deployment DaemonSet StatefulSet ReplicaSet ReplicationController Job CronJob DeploymentConfig');
const NODE_CONFIG = words('MachineConfig KubeletConfig ContainerRuntimeConfig');

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const strings = (v: unknown): string[] => list(v).filter((x): x is string => typeof x === 'string');

/** Why a role's rules grant privileges, or undefined. */
function ruleProblem(rules: unknown): string | undefined {
  for (const rule of list(rules).map(obj)) {
    const verbs = strings(rule.verbs);
    const resources = strings(rule.resources);
    if (verbs.includes('*') || resources.includes('*')) return `its rules grant '*' ${verbs.includes('*') ? 'verbs' : 'resources'}`;
    const escalation = verbs.filter((v) => ESCALATION_VERBS.has(v));
    if (escalation.length > 0) return `its rules grant the ${escalation.join(', ')} verb${escalation.length > 1 ? 's' : ''}`;
    if (verbs.includes('use') && resources.includes('securitycontextconstraints')) return 'its rules grant the use of SecurityContextConstraints';
    if (resources.includes('nodes/proxy')) return 'its rules reach the kubelet API (nodes/proxy)';
  }
  return undefined;
}

/** The pod spec of a workload (Pod, a controller's template, a CronJob's job template). */
function podSpecOf(o: ManifestObject): Json {
  const spec = obj(o.spec);
  if (o.kind === 'Pod') return spec;
  if (o.kind === 'CronJob') return obj(obj(obj(obj(spec.jobTemplate).spec).template).spec);
  return obj(obj(spec.template).spec);
}

function podProblem(pod: Json): string | undefined {
  const host = ['hostNetwork', 'hostPID', 'hostIPC'].filter((k) => pod[k] === true);
  if (host.length > 0) return `it shares the node's ${host.join(', ')}`;
  const hostPath = list(pod.volumes).map(obj).find((v) => v.hostPath !== undefined);
  if (hostPath) return `it mounts the node's filesystem (hostPath volume ${String(hostPath.name ?? '')})`;
  const containers = ['initContainers', 'containers', 'ephemeralContainers'].flatMap((k) => list(pod[k]).map(obj));
  for (const c of containers) {
    const sc = obj(c.securityContext);
    if (sc.privileged === true) return `container ${String(c.name ?? '')} runs privileged`;
    const caps = strings(obj(sc.capabilities).add).filter((cap) => !BASELINE_CAPABILITIES.has(cap));
    if (caps.length > 0) return `container ${String(c.name ?? '')} adds the capabilities ${caps.join(', ')}`;
  }
  return undefined;
}

/**
 * Why `o` grants privileges, or undefined. `all`: every object of the site-config's manifests, so a binding is
 * judged by the role it names when that role comes with it.
 */
export function privilegeOf(o: ManifestObject, all: readonly ManifestObject[] = []): string | undefined {
  const group = groupOf(o.apiVersion);
  if (group === 'machineconfiguration.openshift.io' && NODE_CONFIG.has(o.kind)) return 'the machine-config-operator writes it to the node as root';
  if (group === 'security.openshift.io' && o.kind === 'SecurityContextConstraints') return 'it decides which pods may run privileged';
  if (group === 'admissionregistration.k8s.io' && /^(Validating|Mutating)WebhookConfiguration$/.test(o.kind)) return 'its webhook sees the objects it matches before they are stored';
  if (group === 'apiregistration.k8s.io' && o.kind === 'APIService') return 'it hands an API group to a service of its own';
  if (group === 'apiextensions.k8s.io' && o.kind === 'CustomResourceDefinition' && obj(obj(o.spec).conversion).strategy === 'Webhook') return 'it converts its objects through a webhook';
  if (group === '' && o.kind === 'PersistentVolume' && obj(o.spec).hostPath !== undefined) return 'it is a hostPath volume on the node';
  if (WORKLOADS.has(o.kind)) return podProblem(podSpecOf(o));
  if (group !== RBAC) return undefined;
  if (o.kind === 'Role' || o.kind === 'ClusterRole') {
    const aggregate = Object.keys(o.metadata.labels && typeof o.metadata.labels === 'object' ? (o.metadata.labels as Json) : {}).find((l) => /^rbac\.authorization\.k8s\.io\/aggregate-to-(admin|edit)$/.test(l));
    return ruleProblem(o.rules) ?? (aggregate ? `it adds its rules to the ${aggregate.split('-').pop()} role (${aggregate})` : undefined);
  }
  if (o.kind !== 'RoleBinding' && o.kind !== 'ClusterRoleBinding') return undefined;
  const broad = list(o.subjects).map(obj).map((s) => `${String(s.kind)}:${String(s.name)}`).filter((s) => BROAD_SUBJECTS.has(s) || s.startsWith('Group:system:serviceaccounts:'));
  if (broad.length > 0) return `it grants its role to ${broad.map((s) => s.slice(s.indexOf(':') + 1)).join(', ')}`;
  const ref = obj(o.roleRef);
  const name = String(ref.name ?? '');
  if (ref.kind === 'ClusterRole' && ADMIN_ROLES.has(name)) return `it grants the ${name} role`;
  if (ref.kind === 'ClusterRole' && name.startsWith('system:openshift:scc:')) return `it grants the use of SecurityContextConstraints ${name.slice('system:openshift:scc:'.length)}`;
  const role = all.find((r) => r.kind === ref.kind && groupOf(r.apiVersion) === RBAC && r.metadata.name === name && (ref.kind === 'ClusterRole' || r.metadata.namespace === o.metadata.namespace));
  const why = role && ruleProblem(role.rules);
  return why ? `it grants ${String(ref.kind)} ${name}, whose rules grant privileges (${why.replace(/^its rules grant /, '')})` : undefined;
}
