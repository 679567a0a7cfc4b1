// The OpenAPI v3 documents (/openapi/v3 and /openapi/v3/<api|apis/group>/<version>) that kubectl reads before
// create/apply/replace: its query-parameter verifier looks for the PATCH operation of the object's
// group/version/kind with a `fieldValidation` parameter, and then leaves field validation to the server
// (fieldValidation=Strict) instead of validating client-side (kubernetes/kubernetes release-1.29
// staging/src/k8s.io/cli-runtime/pkg/resource/query_param_verifier_v3.go supportsQueryParamV3). The schemas are
// the ones the simulator validates with, tagged with x-kubernetes-group-version-kind as the real ones are
// (kube-openapi builder3; apiextensions-apiserver pkg/controller/openapi/builder for CRDs).
import { createHash } from 'node:crypto';
import type { ResourceRegistry, ServedResource } from './resources';

/** "api/v1" or "apis/<group>/<version>": the key of a group/version in the root document. */
function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

/** Definition names as the real documents spell them (io.k8s.api.core.v1.Secret, com.github.openshift.api.config.v1.Image). */
function definitionName(r: ServedResource): string {
  if (!r.type.group) return `io.k8s.api.core.v1.${r.type.kind}`;
  if (r.type.group === 'certificates.k8s.io') return `io.k8s.api.certificates.${r.type.version}.${r.type.kind}`;
  const short = r.type.group.replace(/\.openshift\.io$/, '');
  return `com.github.openshift.api.${short}.${r.type.version}.${r.type.kind}`;
}

const queryParam = (name: string) => ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } });
const pathParam = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string', uniqueItems: true } });
const WRITE_PARAMS = [queryParam('dryRun'), queryParam('fieldManager'), queryParam('fieldValidation')];

function operation(r: ServedResource, action: string, extraParams: unknown[] = []): Record<string, unknown> {
  return {
    operationId: `${action}${r.type.kind}`,
    parameters: extraParams,
    responses: { '200': { description: 'OK', content: { 'application/json': { schema: { $ref: `#/components/schemas/${definitionName(r)}` } } } } },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: r.type.group, version: r.type.version, kind: r.type.kind },
  };
}

function pathsOf(r: ServedResource): Record<string, unknown> {
  const base = `/${gvPath(r.type.group, r.type.version)}${r.type.namespaced ? '/namespaces/{namespace}' : ''}/${r.type.plural}`;
  const scope = r.type.namespaced ? [pathParam('namespace')] : [];
  return {
    [base]: {
      parameters: scope,
      get: operation(r, 'list'),
      post: operation(r, 'post', WRITE_PARAMS),
      delete: operation(r, 'deletecollection'),
    },
    [`${base}/{name}`]: {
      parameters: [pathParam('name'), ...scope],
      get: operation(r, 'get'),
      put: operation(r, 'put', WRITE_PARAMS),
      patch: operation(r, 'patch', [...WRITE_PARAMS, queryParam('force')]),
      delete: operation(r, 'delete', [queryParam('dryRun')]),
    },
  };
}

function servedIn(registry: ResourceRegistry, group: string, version: string): ServedResource[] {
  return registry.all.filter((r) => r.type.group === group && r.type.version === version);
}

/** The document of one group/version, or undefined when nothing is served there. */
export function openApiV3Document(registry: ResourceRegistry, group: string, version: string, kubeVersion: string): Record<string, unknown> | undefined {
  const served = servedIn(registry, group, version);
  if (served.length === 0) return undefined;
  const schemas: Record<string, unknown> = {};
  for (const r of served) {
    schemas[definitionName(r)] = { ...r.schema, 'x-kubernetes-group-version-kind': [{ group: r.type.group, kind: r.type.kind, version: r.type.version }] };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: kubeVersion },
    paths: Object.assign({}, ...served.map(pathsOf)),
    components: { schemas },
  };
}

/** /openapi/v3: where each group/version's document is (serverRelativeURL with a content hash). */
export function openApiV3Root(registry: ResourceRegistry, kubeVersion: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const r of registry.all) {
    const key = gvPath(r.type.group, r.type.version);
    if (key in paths) continue;
    const doc = openApiV3Document(registry, r.type.group, r.type.version, kubeVersion);
    const hash = createHash('sha512').update(JSON.stringify(doc)).digest('hex').toUpperCase().slice(0, 128);
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
  }
  return { paths };
}
