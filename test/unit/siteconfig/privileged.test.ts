// privilegeOf as rows: object → why it grants privileges (or undefined). The corpus (i190–i193, v33, v34) covers
// the same rules through validation; these rows pin the edges.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { privilegeOf } from '../../../src/siteconfig/privileged';
import type { ManifestObject } from '../../../src/siteconfig/manifests';

const rbac = 'rbac.authorization.k8s.io/v1';
const pod = (spec: Record<string, unknown>): ManifestObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'n' }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } });
const binding = (roleRef: Record<string, string>, subjects: Record<string, string>[]): ManifestObject => ({ apiVersion: rbac, kind: 'RoleBinding', metadata: { name: 'b', namespace: 'n' }, roleRef, subjects });
const sa = { kind: 'ServiceAccount', name: 'pos', namespace: 'n' };

const rows: [string, ManifestObject, RegExp | undefined, ManifestObject[]?][] = [
  ['a plain pod', pod({}), undefined],
  ['hostNetwork', pod({ hostNetwork: true }), /shares the node's hostNetwork/],
  ['a Baseline capability', pod({ containers: [{ name: 'c', securityContext: { capabilities: { add: ['NET_BIND_SERVICE'] } } }] }), undefined],
  ['a capability spelled CAP_…, as Pod Security admission compares it', pod({ containers: [{ name: 'c', securityContext: { capabilities: { add: ['CAP_NET_BIND_SERVICE'] } } }] }), /adds the capabilities CAP_NET_BIND_SERVICE/],
  ['SYS_ADMIN', pod({ containers: [{ name: 'c', securityContext: { capabilities: { add: ['SYS_ADMIN'] } } }] }), /adds the capabilities SYS_ADMIN/],
  ['a privileged init container', pod({ initContainers: [{ name: 'init', securityContext: { privileged: true } }] }), /container init runs privileged/],
  ['every service account of a namespace', binding({ kind: 'ClusterRole', name: 'view' }, [{ kind: 'Group', name: 'system:serviceaccounts:n' }]), /grants its role to system:serviceaccounts:n/],
  ['view for one service account', binding({ kind: 'ClusterRole', name: 'view' }, [sa]), undefined],
  ['cluster-admin for one service account', binding({ kind: 'ClusterRole', name: 'cluster-admin' }, [sa]), /grants the cluster-admin role/],
  ['a Role of another namespace is not this binding\'s', binding({ kind: 'Role', name: 'r' }, [sa]), undefined, [{ apiVersion: rbac, kind: 'Role', metadata: { name: 'r', namespace: 'other' }, rules: [{ verbs: ['*'], resources: ['pods'] }] }]],
  ['a Role of its namespace with impersonate', binding({ kind: 'Role', name: 'r' }, [sa]), /grants Role r, whose rules grant privileges \(the impersonate verb\)/, [{ apiVersion: rbac, kind: 'Role', metadata: { name: 'r', namespace: 'n' }, rules: [{ verbs: ['impersonate'], resources: ['users'] }] }]],
  ['a ClusterRole aggregated into admin', { apiVersion: rbac, kind: 'ClusterRole', metadata: { name: 'c', labels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }, rules: [{ verbs: ['get'], resources: ['tills'] }] }, /adds its rules to the admin role/],
  ['a ClusterRole that may use SCCs', { apiVersion: rbac, kind: 'ClusterRole', metadata: { name: 'c' }, rules: [{ verbs: ['use'], resources: ['securitycontextconstraints'] }] }, /use of SecurityContextConstraints/],
  ['a CRD without a conversion webhook', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'x.y' }, spec: { conversion: { strategy: 'None' } } }, undefined],
  ['a KubeletConfig', { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'KubeletConfig', metadata: { name: 'k' } }, /writes it to the node as root/],
  ['a ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n' } }, undefined],
];

for (const [name, object, want, all] of rows) {
  test(`privilegeOf: ${name}`, () => {
    const why = privilegeOf(object, all ?? []);
    if (want === undefined) assert.equal(why, undefined);
    else assert.match(why ?? '', want);
  });
}
