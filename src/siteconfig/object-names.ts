// metadata.name and metadata.namespace of an extra manifest, checked offline as kube-apiserver checks them, so an
// unrendered template (`$mcp`, `${name}`, `{{ .name }}`) is refused before the change starts, not by the node's
// API server halfway through it. Which rule a kind's name follows:
// - Namespace, and OpenShift's Project (a namespace by another name): a DNS-1123 label (kubernetes/kubernetes
//   pkg/apis/core/validation/validation.go ValidateNamespaceName → apimachinery ValidateNamespaceName);
// - Service: a DNS-1035 label, which starts with a letter (validation.go ValidateServiceName = NameIsDNS1035Label);
// - Role, ClusterRole, RoleBinding, ClusterRoleBinding: any path segment name (pkg/apis/rbac/validation
//   ValidateRBACName = path.IsValidPathSegmentName);
// - custom resources (every CRD's kind: kubernetes/apiextensions-apiserver pkg/registry/customresource/validator.go,
//   NameIsDNSSubdomain) and the other built-in kinds (ConfigMap, Secret, ServiceAccount, Pod, … in validation.go):
//   a DNS-1123 subdomain;
// - the kinds of OpenShift's aggregated API groups (openshift-apiserver: routes, builds, images, …) only what every
//   name is, a path segment: their servers have rules of their own.
// The patterns and limits are apimachinery's pkg/util/validation/validation.go (IsDNS1123Subdomain: 253 characters
// and, unlike a host name, no limit per dot-separated part; IsDNS1123Label and IsDNS1035Label: 63).
import { dns1123LabelProblem } from './net';

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const AGGREGATED_GROUP = /^(apps|authorization|build|image|oauth|project|quota|route|security|template|user)\.openshift\.io$/;
const RBAC_KINDS = ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'];

interface NameRule {
  ok(name: string): boolean;
  what: string;
}

const RULES = {
  subdomain: { ok: (n: string) => n.length <= 253 && SUBDOMAIN.test(n), what: "a DNS subdomain (a-z, 0-9, '-' and '.', at most 253 characters)" },
  label: { ok: (n: string) => dns1123LabelProblem(n) === undefined, what: "a DNS label (a-z, 0-9 and '-', at most 63 characters)" },
  label1035: { ok: (n: string) => n.length <= 63 && LABEL_1035.test(n), what: "a DNS label that starts with a letter (a-z, 0-9 and '-', at most 63 characters)" },
  pathSegment: { ok: (n: string) => n !== '.' && n !== '..' && !/[/%]/.test(n), what: "a name without '/' or '%', other than '.' and '..'" },
} satisfies Record<string, NameRule>;

function ruleFor(apiVersion: string, kind: string): NameRule {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
  if ((kind === 'Namespace' && group === '') || (kind === 'Project' && group === 'project.openshift.io')) return RULES.label;
  if (kind === 'Service' && group === '') return RULES.label1035;
  if (group === 'rbac.authorization.k8s.io' && RBAC_KINDS.includes(kind)) return RULES.pathSegment;
  if (AGGREGATED_GROUP.test(group)) return RULES.pathSegment;
  return RULES.subdomain;
}

/** The value as it can be shown: quoted, escaped, and cut short. */
const shown = (v: string): string => JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}…` : v);

function placeholderHint(v: string): string {
  return /\$\w|\$\{|\{\{/.test(v) ? '; it looks like an unfilled template placeholder: render the manifest before it goes on the media' : '';
}

/** Why a manifest's metadata.name would be refused by the API server, or undefined. */
export function objectNameProblem(apiVersion: string, kind: string, name: string): string | undefined {
  const rule = ruleFor(apiVersion, kind);
  if (name !== '' && rule.ok(name)) return undefined;
  return `metadata.name ${shown(name)} is not a valid ${kind} name: the API server requires ${rule.what}${placeholderHint(name)}`;
}

/** Why a manifest's metadata.namespace is not a namespace name (a DNS label), or undefined. */
export function namespaceNameProblem(kind: string, name: string, namespace: string): string | undefined {
  if (namespace !== '' && RULES.label.ok(namespace)) return undefined;
  return `${kind} ${shown(name)}: metadata.namespace ${shown(namespace)} is not a namespace name: the API server requires ${RULES.label.what}${placeholderHint(namespace)}`;
}
