// Extra manifests' names are checked offline as kube-apiserver checks them (rules and sources in
// src/siteconfig/object-names.ts), so an unrendered template fails at the workstation, not at the store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseManifestFile } from '../../../src/siteconfig/manifests';

function problemsOf(apiVersion: string, kind: string, name: string, namespace?: string): string[] {
  const meta = JSON.stringify({ name, ...(namespace !== undefined ? { namespace } : {}) });
  return parseManifestFile(`{"apiVersion": "${apiVersion}", "kind": "${kind}", "metadata": ${meta}}`).problems;
}

test('names the API server accepts are accepted, kind by kind', () => {
  const rows: [string, string, string][] = [
    ['machineconfiguration.openshift.io/v1', 'MachineConfig', '95-store-reboot.worker'],
    ['v1', 'ConfigMap', `store-${'x'.repeat(100)}`],
    ['v1', 'Namespace', 'store-42'],
    ['v1', 'Service', 'store-api'],
    ['rbac.authorization.k8s.io/v1', 'ClusterRole', 'system:store-reader'],
    ['route.openshift.io/v1', 'Route', 'Store_Console'],
    ['sriovnetwork.openshift.io/v1', 'SriovNetwork', 'fronthaul.vlan-140'],
  ];
  for (const [apiVersion, kind, name] of rows) assert.deepEqual(problemsOf(apiVersion, kind, name), [], `${kind} ${name}`);
});

test('names the API server refuses are refused offline, saying which rule the kind follows', () => {
  const rows: [string, string, string, RegExp][] = [
    ['machineconfiguration.openshift.io/v1', 'MachineConfig', '95-talm-initiated-reboot-$mcp', /not a valid MachineConfig name: the API server requires a DNS subdomain.*unfilled template placeholder/],
    ['sriovnetwork.openshift.io/v1', 'SriovNetwork', '${name}', /DNS subdomain.*unfilled template placeholder/],
    ['v1', 'ConfigMap', '{{ .name }}', /template placeholder/],
    ['v1', 'ConfigMap', 'Store-Settings', /DNS subdomain/],
    ['v1', 'ConfigMap', 'x'.repeat(254), /at most 253/],
    ['v1', 'Namespace', 'store.42', /DNS label/],
    ['v1', 'Namespace', 'n'.repeat(64), /at most 63/],
    ['project.openshift.io/v1', 'Project', 'Store42', /DNS label/],
    ['v1', 'Service', '42-store', /DNS label that starts with a letter/],
    ['rbac.authorization.k8s.io/v1', 'Role', 'a/b', /without '\/' or '%'/],
    ['route.openshift.io/v1', 'Route', '..', /without '\/' or '%'/],
  ];
  for (const [apiVersion, kind, name, message] of rows) {
    const problems = problemsOf(apiVersion, kind, name);
    assert.equal(problems.length, 1, `${kind} ${name}`);
    assert.match(problems[0]!, message, `${kind} ${name}`);
  }
});

test('a namespace that is not a namespace name (an unrendered $namespace) is refused offline', () => {
  const problems = problemsOf('v1', 'ConfigMap', 'store-settings', '$namespace');
  assert.equal(problems.length, 1);
  assert.match(problems[0]!, /metadata\.namespace "\$namespace" is not a namespace name.*template placeholder/);
  assert.deepEqual(problemsOf('v1', 'ConfigMap', 'store-settings', 'openshift-config'), []);
});

test('a name with control characters is shown escaped', () => {
  const problems = problemsOf('v1', 'ConfigMap', 'a\u001b[31mb');
  assert.equal(problems.length, 1);
  assert.ok(problems[0]!.includes('"a\\u001b[31mb"'), problems[0]);
});
