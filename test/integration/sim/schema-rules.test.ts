// For each rule of the openshift/api schemas that a write of the agent could break (the fields it writes: Ingress
// appsDomain and componentRoutes, APIServer namedCertificates, IngressController defaultCertificate, Image
// additionalTrustedCA, Proxy spec, the mirror sets, MachineConfig, Route), a write the real CRD refuses is
// refused by the simulator's schema files too, with the field the real 422 names. Each row names the rule as the
// schema file states it (test/sim/schemas/openshift-api/, facts of openshift/api 2a3d739).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatFieldError, loadCrdValidator } from '../../sim/crd-schema';

const validator = loadCrdValidator();

interface Row {
  rule: string;
  apiVersion: string;
  kind: string;
  spec: unknown;
  /** The stored object's spec, for transition rules. */
  oldSpec?: unknown;
  /** The field error the real server returns (field: message), or a prefix of it. */
  refusal: string;
}

const CFG = 'config.openshift.io/v1';
const route = (over: Record<string, unknown>) => ({ to: { kind: 'Service', name: 'console' }, ...over });
const componentRoute = (over: Record<string, unknown>) => ({ namespace: 'openshift-console', name: 'console', hostname: 'console.apps.example.com', ...over });

const ROWS: Row[] = [
  { rule: 'Ingress spec.domain: self == oldSelf', apiVersion: CFG, kind: 'Ingress', spec: { domain: 'apps.new.example.com' }, oldSpec: { domain: 'apps.old.example.com' }, refusal: 'spec.domain: Invalid value: "string": domain is immutable once set' },
  { rule: 'Ingress componentRoutes[]: required hostname', apiVersion: CFG, kind: 'Ingress', spec: { componentRoutes: [{ namespace: 'openshift-console', name: 'console' }] }, refusal: 'spec.componentRoutes[0].hostname: Required value' },
  { rule: 'Ingress componentRoutes[].hostname: pattern', apiVersion: CFG, kind: 'Ingress', spec: { componentRoutes: [componentRoute({ hostname: 'console_apps.example.com' })] }, refusal: 'spec.componentRoutes[0].hostname: Invalid value: "console_apps.example.com": spec.componentRoutes[0].hostname in body should match' },
  { rule: 'Ingress componentRoutes[].namespace: pattern', apiVersion: CFG, kind: 'Ingress', spec: { componentRoutes: [componentRoute({ namespace: 'Openshift-Console' })] }, refusal: 'spec.componentRoutes[0].namespace: Invalid value: "Openshift-Console": spec.componentRoutes[0].namespace in body should match' },
  { rule: 'Ingress componentRoutes[].namespace: maxLength 63', apiVersion: CFG, kind: 'Ingress', spec: { componentRoutes: [componentRoute({ namespace: 'n'.repeat(64) })] }, refusal: 'spec.componentRoutes[0].namespace: Too long: may not be' },
  { rule: 'Ingress componentRoutes[].name: minLength 1', apiVersion: CFG, kind: 'Ingress', spec: { componentRoutes: [componentRoute({ name: '' })] }, refusal: 'spec.componentRoutes[0].name: Invalid value: "": spec.componentRoutes[0].name in body should be at least 1 chars long' },
  { rule: 'Ingress componentRoutes[].servingCertKeyPairSecret: required name', apiVersion: CFG, kind: 'Ingress', spec: { componentRoutes: [componentRoute({ servingCertKeyPairSecret: {} })] }, refusal: 'spec.componentRoutes[0].servingCertKeyPairSecret.name: Required value' },
  { rule: 'Ingress componentRoutes: list-map keys namespace, name', apiVersion: CFG, kind: 'Ingress', spec: { componentRoutes: [componentRoute({}), componentRoute({ hostname: 'other.apps.example.com' })] }, refusal: 'spec.componentRoutes[1]: Duplicate value' },
  { rule: 'APIServer namedCertificates[].servingCertificate: required name', apiVersion: CFG, kind: 'APIServer', spec: { servingCerts: { namedCertificates: [{ names: ['api.example.com'], servingCertificate: {} }] } }, refusal: 'spec.servingCerts.namedCertificates[0].servingCertificate.name: Required value' },
  { rule: 'APIServer namedCertificates[].names: array of strings', apiVersion: CFG, kind: 'APIServer', spec: { servingCerts: { namedCertificates: [{ names: 'api.example.com', servingCertificate: { name: 'api-cert' } }] } }, refusal: 'spec.servingCerts.namedCertificates[0].names: Invalid value: "string": spec.servingCerts.namedCertificates[0].names in body must be of type array' },
  { rule: 'APIServer namedCertificates: maxItems 32', apiVersion: CFG, kind: 'APIServer', spec: { servingCerts: { namedCertificates: Array.from({ length: 33 }, (_, i) => ({ names: [`h${i}.example.com`], servingCertificate: { name: `c${i}` } })) } }, refusal: 'spec.servingCerts.namedCertificates: Too many: 33: must have at most 32 items' },
  { rule: 'IngressController defaultCertificate.name: string', apiVersion: 'operator.openshift.io/v1', kind: 'IngressController', spec: { defaultCertificate: { name: 7 } }, refusal: 'spec.defaultCertificate.name: Invalid value: "integer": spec.defaultCertificate.name in body must be of type string' },
  { rule: 'Image additionalTrustedCA: required name', apiVersion: CFG, kind: 'Image', spec: { additionalTrustedCA: {} }, refusal: 'spec.additionalTrustedCA.name: Required value' },
  { rule: 'Proxy trustedCA: required name', apiVersion: CFG, kind: 'Proxy', spec: { httpProxy: 'http://proxy.example.com:3128', trustedCA: {} }, refusal: 'spec.trustedCA.name: Required value' },
  { rule: 'Proxy noProxy: a string, not a list', apiVersion: CFG, kind: 'Proxy', spec: { noProxy: ['.example.com'] }, refusal: 'spec.noProxy: Invalid value: "array": spec.noProxy in body must be of type string' },
  { rule: 'ImageDigestMirrorSet imageDigestMirrors[]: required source', apiVersion: CFG, kind: 'ImageDigestMirrorSet', spec: { imageDigestMirrors: [{ mirrors: ['mirror.example.com/ocp'] }] }, refusal: 'spec.imageDigestMirrors[0].source: Required value' },
  { rule: 'ImageDigestMirrorSet imageDigestMirrors[].source: pattern', apiVersion: CFG, kind: 'ImageDigestMirrorSet', spec: { imageDigestMirrors: [{ source: 'quay.io/OpenShift', mirrors: ['mirror.example.com/ocp'] }] }, refusal: 'spec.imageDigestMirrors[0].source: Invalid value: "quay.io/OpenShift": spec.imageDigestMirrors[0].source in body should match' },
  { rule: 'ImageDigestMirrorSet imageDigestMirrors[].mirrors[]: pattern (no wildcard)', apiVersion: CFG, kind: 'ImageDigestMirrorSet', spec: { imageDigestMirrors: [{ source: 'quay.io/openshift', mirrors: ['*.example.com'] }] }, refusal: 'spec.imageDigestMirrors[0].mirrors[0]: Invalid value: "*.example.com": spec.imageDigestMirrors[0].mirrors[0] in body should match' },
  { rule: 'ImageDigestMirrorSet imageDigestMirrors[].mirrors: list-type set', apiVersion: CFG, kind: 'ImageDigestMirrorSet', spec: { imageDigestMirrors: [{ source: 'quay.io/openshift', mirrors: ['mirror.example.com/ocp', 'mirror.example.com/ocp'] }] }, refusal: 'spec.imageDigestMirrors[0].mirrors[1]: Duplicate value: "mirror.example.com/ocp"' },
  { rule: 'ImageDigestMirrorSet imageDigestMirrors[].mirrorSourcePolicy: enum', apiVersion: CFG, kind: 'ImageDigestMirrorSet', spec: { imageDigestMirrors: [{ source: 'quay.io/openshift', mirrors: ['mirror.example.com/ocp'], mirrorSourcePolicy: 'Never' }] }, refusal: 'spec.imageDigestMirrors[0].mirrorSourcePolicy: Unsupported value: "Never": supported values: "NeverContactSource", "AllowContactingSource"' },
  { rule: 'ImageTagMirrorSet imageTagMirrors[].source: pattern', apiVersion: CFG, kind: 'ImageTagMirrorSet', spec: { imageTagMirrors: [{ source: 'quay.io/ocp:4.16', mirrors: ['mirror.example.com/ocp'] }] }, refusal: 'spec.imageTagMirrors[0].source: Invalid value: "quay.io/ocp:4.16": spec.imageTagMirrors[0].source in body should match' },
  { rule: 'ImageTagMirrorSet imageTagMirrors[].mirrors: list-type set', apiVersion: CFG, kind: 'ImageTagMirrorSet', spec: { imageTagMirrors: [{ source: 'quay.io/ocp', mirrors: ['m.example.com/ocp', 'm.example.com/ocp'] }] }, refusal: 'spec.imageTagMirrors[0].mirrors[1]: Duplicate value: "m.example.com/ocp"' },
  { rule: 'ImageContentSourcePolicy repositoryDigestMirrors[]: required source', apiVersion: 'operator.openshift.io/v1alpha1', kind: 'ImageContentSourcePolicy', spec: { repositoryDigestMirrors: [{ mirrors: ['mirror.example.com/ocp'] }] }, refusal: 'spec.repositoryDigestMirrors[0].source: Required value' },
  { rule: 'MachineConfig spec.config: an object', apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', spec: { config: 'ignition' }, refusal: 'spec.config: Invalid value: "string": spec.config in body must be of type object' },
  { rule: 'MachineConfig kernelArguments[]: strings', apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', spec: { kernelArguments: [1] }, refusal: 'spec.kernelArguments[0]: Invalid value: "integer": spec.kernelArguments[0] in body must be of type string' },
  { rule: 'Route spec: required to', apiVersion: 'route.openshift.io/v1', kind: 'Route', spec: { host: 'console.apps.example.com' }, refusal: 'spec.to: Required value' },
  { rule: 'Route spec.host: pattern', apiVersion: 'route.openshift.io/v1', kind: 'Route', spec: route({ host: 'console_apps.example.com' }), refusal: 'spec.host: Invalid value: "console_apps.example.com": spec.host in body should match' },
  { rule: 'Route spec.host: maxLength 253', apiVersion: 'route.openshift.io/v1', kind: 'Route', spec: route({ host: `${'a'.repeat(60)}.`.repeat(4) + 'example.com' }), refusal: 'spec.host: Too long: may not be' },
  { rule: 'Route spec.tls.termination: enum', apiVersion: 'route.openshift.io/v1', kind: 'Route', spec: route({ tls: { termination: 'Edge' } }), refusal: 'spec.tls.termination: Unsupported value: "Edge": supported values: "edge", "reencrypt", "passthrough"' },
  { rule: 'Route spec.tls: passthrough carries no certificate (anyOf)', apiVersion: 'route.openshift.io/v1', kind: 'Route', spec: route({ tls: { termination: 'passthrough', certificate: 'PEM' } }), refusal: 'spec.tls.certificate: Too long: may not be longer than 0' },
  { rule: 'Route spec.tls: passthrough with insecureEdgeTerminationPolicy Allow (CEL)', apiVersion: 'route.openshift.io/v1', kind: 'Route', spec: route({ tls: { termination: 'passthrough', insecureEdgeTerminationPolicy: 'Allow' } }), refusal: 'spec.tls: Invalid value: "object": cannot have both spec.tls.termination: passthrough and spec.tls.insecureEdgeTerminationPolicy: Allow' },
];

const objectOf = (row: Row, spec: unknown) => ({ apiVersion: row.apiVersion, kind: row.kind, metadata: { name: row.kind === 'IngressController' ? 'default' : 'cluster', ...(row.kind === 'Route' || row.kind === 'IngressController' ? { namespace: 'openshift-console' } : {}) }, spec });

for (const row of ROWS) {
  test(`refused as by the real CRD: ${row.rule}`, () => {
    const old = row.oldSpec === undefined ? undefined : objectOf(row, row.oldSpec);
    const errors = validator.validate(row.apiVersion, row.kind, objectOf(row, row.spec), old).errors.map(formatFieldError);
    assert.ok(errors.some((e) => e.startsWith(row.refusal)), `expected a refusal starting "${row.refusal}", got ${JSON.stringify(errors)}`);
  });
}

test('the same objects, put right, are accepted (each row above fails on its rule alone)', () => {
  const fine: [string, string, unknown][] = [
    [CFG, 'Ingress', { appsDomain: 'apps.new.example.com', componentRoutes: [componentRoute({ servingCertKeyPairSecret: { name: 'console-cert' } })] }],
    [CFG, 'APIServer', { servingCerts: { namedCertificates: [{ names: ['api.example.com'], servingCertificate: { name: 'api-cert' } }] } }],
    ['operator.openshift.io/v1', 'IngressController', { defaultCertificate: { name: 'apps-cert' } }],
    [CFG, 'Image', { additionalTrustedCA: { name: 'registry-cas' } }],
    [CFG, 'Proxy', { httpProxy: 'http://proxy.example.com:3128', noProxy: '.example.com', trustedCA: { name: 'user-ca-bundle' } }],
    [CFG, 'ImageDigestMirrorSet', { imageDigestMirrors: [{ source: 'quay.io/openshift', mirrors: ['mirror.example.com/ocp'], mirrorSourcePolicy: 'NeverContactSource' }] }],
    [CFG, 'ImageTagMirrorSet', { imageTagMirrors: [{ source: 'quay.io/ocp', mirrors: ['m.example.com/ocp'] }] }],
    ['operator.openshift.io/v1alpha1', 'ImageContentSourcePolicy', { repositoryDigestMirrors: [{ source: 'quay.io/ocp', mirrors: ['m.example.com/ocp'] }] }],
    ['machineconfiguration.openshift.io/v1', 'MachineConfig', { config: { ignition: { version: '3.2.0' } }, kernelArguments: ['nosmt'] }],
    ['route.openshift.io/v1', 'Route', route({ host: 'console.apps.example.com', tls: { termination: 'passthrough', insecureEdgeTerminationPolicy: 'Redirect' } })],
  ];
  for (const [apiVersion, kind, spec] of fine) {
    const errors = validator.validate(apiVersion, kind, objectOf({ apiVersion, kind } as Row, spec)).errors.map(formatFieldError);
    assert.deepEqual(errors, [], kind);
  }
});
