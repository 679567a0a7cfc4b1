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

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const AGGREGATED_GROUPS = ['apps.openshift.io', 'authorization.openshift.io', 'build.openshift.io', 'image.openshift.io', 'oauth.openshift.io', 'project.openshift.io', 'quota.openshift.io', 'route.openshift.io', 'security.openshift.io', 'template.openshift.io', 'user.openshift.io'];
const RBAC_KINDS = ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'];

interface NameRule {
  ok(name: string): boolean;
  what: string;
}

const RULES = {
  subdomain: { ok: (n: string) => n.length <= 253 && SUBDOMAIN.test(n), what: "a DNS subdomain: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters" },
  label: { ok: (n: string) => n.length <= 63 && LABEL.test(n), what: "a DNS label: lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters" },
  label1035: { ok: (n: string) => n.length <= 63 && LABEL_1035.test(n), what: "a DNS-1035 label: lower-case letters, digits and '-', starting with a letter and ending with a letter or digit, at most 63 characters" },
  pathSegment: { ok: (n: string) => n !== '.' && n !== '..' && !/[/%]/.test(n), what: "usable in a URL: not '.' or '..', without '/' or '%'" },
} satisfies Record<string, NameRule>;

function ruleFor(apiVersion: string, kind: string): NameRule {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
  if ((kind === 'Namespace' && group === '') || (kind === 'Project' && group === 'project.openshift.io')) return RULES.label;
  if (kind === 'Service' && group === '') return RULES.label1035;
  if (group === 'rbac.authorization.k8s.io' && RBAC_KINDS.includes(kind)) return RULES.pathSegment;
  if (AGGREGATED_GROUPS.includes(group)) return RULES.pathSegment;
  return RULES.subdomain;
}

/** The value as it can be shown: quoted, escaped, and cut short. */
const shown = (v: string): string => JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}…` : v);

function placeholderHint(v: string): string {
  return /\$\w|\$\{|\{\{/.test(v) ? '; it looks like a template placeholder that was never filled in: render the manifest (PolicyGen, envsubst, Helm) before it goes on the media' : '';
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
