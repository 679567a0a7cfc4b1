// What the simulated API server serves: the resource types of src/cluster/resources.ts (R), each with its
// schema (a real openshift/api CRD, or one written here for built-in types, for MachineConfigPool, which the
// reference has no CRD file for, and for OLM's CatalogSource), subresources, discovery names and field selectors.
import type { ResourceType } from '../../../src/cluster/types';
import { R } from '../../../src/cluster/resources';
import { CRD_DIR, crdInfoOf, loadCrds, type CrdDocument, type CrdInfo, type JsonSchema } from '../crd-schema';
import { noSuchResource } from './status';
import type { KubeObject } from '../../../src/cluster/types';

/** Subresources served. (IngressController's CRD also declares `scale`; the simulator does not serve it.) */
export type Subresource = 'status' | 'approval';

export interface ServedResource {
  type: ResourceType;
  singular: string;
  listKind: string;
  shortNames: string[];
  categories: string[];
  subresources: Subresource[];
  schema: JsonSchema;
  /**
   * Built into the API server (core/k8s types, and Route, which openshift-apiserver serves as a Go type):
   * strategic merge patch works, list items carry no kind/apiVersion, schema type errors are decode errors (400).
   * CRDs: strategic merge patch is 415, list items keep kind/apiVersion, schema errors are 422.
   */
  builtIn: boolean;
  /** metadata.generation is maintained (CRDs and most spec-carrying types; not Secrets, ConfigMaps, Nodes, ...). */
  tracksGeneration: boolean;
  /**
   * A PUT without metadata.resourceVersion overwrites whatever is stored (the strategy's
   * AllowUnconditionalUpdate). True for the core types served here (kubernetes pkg/registry/core/{secret,
   * configmap,namespace,node}/strategy.go, pkg/registry/certificates/certificates/strategy.go); false for
   * custom resources (apiextensions-apiserver pkg/registry/customresource/strategy.go) and Routes
   * (openshift/openshift-apiserver master pkg/route/apiserver/registry/route/strategy.go), which answer 422.
   */
  allowsUnconditionalUpdate: boolean;
  /** Field labels accepted in fieldSelector besides metadata.name and metadata.namespace. */
  fieldLabels: string[];
  /** Served only from this OpenShift 4.x minor on (the CRD is absent below). */
  sinceMinor?: number;
  /** The CRD file the schema comes from, when it is one. */
  crdFile?: string;
}

const str: JsonSchema = { type: 'string' };
const bool: JsonSchema = { type: 'boolean' };
const int: JsonSchema = { type: 'integer' };
const strings: JsonSchema = { type: 'array', items: str };
const stringMap: JsonSchema = { type: 'object', additionalProperties: str };
const bytesMap: JsonSchema = { type: 'object', additionalProperties: { type: 'string', format: 'byte' } };
const anyObject: JsonSchema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
const anyArray: JsonSchema = { type: 'array', items: anyObject };
const quantityMap: JsonSchema = { type: 'object', additionalProperties: { 'x-kubernetes-int-or-string': true } };
const meta: JsonSchema = { type: 'object' };

function root(properties: Record<string, JsonSchema>): JsonSchema {
  return { type: 'object', properties: { apiVersion: str, kind: str, metadata: meta, ...properties } };
}

const condition = (extra: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: 'object',
  required: ['type', 'status'],
  properties: { type: str, status: str, reason: str, message: str, lastTransitionTime: str, ...extra },
});

// k8s.io/api/core/v1 types, restricted to the JSON fields (unknown fields are dropped by the decoder).
const SECRET_SCHEMA = root({ data: bytesMap, stringData: stringMap, type: str, immutable: bool });
const CONFIGMAP_SCHEMA = root({ data: stringMap, binaryData: bytesMap, immutable: bool });
const NAMESPACE_SCHEMA = root({
  spec: { type: 'object', properties: { finalizers: strings } },
  status: { type: 'object', properties: { phase: str, conditions: { type: 'array', items: condition() } } },
});
const NODE_SCHEMA = root({
  spec: {
    type: 'object',
    properties: {
      podCIDR: str,
      podCIDRs: strings,
      providerID: str,
      unschedulable: bool,
      taints: {
        type: 'array',
        items: {
          type: 'object',
          required: ['key', 'effect'],
          properties: { key: str, value: str, effect: { type: 'string', enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] }, timeAdded: str },
        },
      },
      configSource: anyObject,
      externalID: str,
    },
  },
  status: {
    type: 'object',
    properties: {
      capacity: quantityMap,
      allocatable: quantityMap,
      phase: str,
      conditions: { type: 'array', items: condition({ lastHeartbeatTime: str }) },
      addresses: { type: 'array', items: { type: 'object', required: ['type', 'address'], properties: { type: str, address: str } } },
      daemonEndpoints: anyObject,
      nodeInfo: { type: 'object', additionalProperties: str },
      images: anyArray,
      volumesInUse: strings,
      volumesAttached: anyArray,
      config: anyObject,
      runtimeHandlers: anyArray,
      features: anyObject,
    },
  },
});
// k8s.io/api/certificates/v1
const CSR_SCHEMA = root({
  spec: {
    type: 'object',
    properties: {
      request: { type: 'string', format: 'byte' },
      signerName: str,
      expirationSeconds: int,
      usages: strings,
      username: str,
      uid: str,
      groups: strings,
      extra: { type: 'object', additionalProperties: strings },
    },
  },
  status: {
    type: 'object',
    properties: {
      conditions: { type: 'array', items: { type: 'object', properties: { type: str, status: str, reason: str, message: str, lastUpdateTime: str, lastTransitionTime: str } } },
      certificate: { type: 'string', format: 'byte' },
    },
  },
});

const labelSelector: JsonSchema = {
  type: 'object',
  properties: {
    matchLabels: stringMap,
    matchExpressions: {
      type: 'array',
      items: { type: 'object', required: ['key', 'operator'], properties: { key: str, operator: str, values: strings } },
    },
  },
  'x-kubernetes-map-type': 'atomic',
};

/**
 * MachineConfigPool essentials (machineconfiguration.openshift.io/v1; openshift/api
 * machineconfiguration/v1/types.go): the reference has no CRD file for it.
 */
const MCP_SCHEMA = root({
  spec: {
    type: 'object',
    properties: {
      machineConfigSelector: labelSelector,
      nodeSelector: labelSelector,
      paused: bool,
      maxUnavailable: { 'x-kubernetes-int-or-string': true },
      configuration: { type: 'object', properties: { name: str, source: anyArray } },
      pinnedImageSets: anyArray,
    },
  },
  status: {
    type: 'object',
    properties: {
      observedGeneration: int,
      configuration: { type: 'object', properties: { name: str, source: anyArray } },
      machineCount: int,
      updatedMachineCount: int,
      readyMachineCount: int,
      unavailableMachineCount: int,
      degradedMachineCount: int,
      conditions: { type: 'array', items: condition({ lastTransitionTime: str }) },
      certExpirys: anyArray,
      poolSynchronizersStatus: anyArray,
    },
  },
});

/**
 * CatalogSource essentials (operators.coreos.com/v1alpha1). The real CRD is operator-framework/api's
 * (crds/operators.coreos.com_catalogsources.yaml, pkg/operators/v1alpha1/catalogsource_types.go), not
 * restated here: the agent only lists CatalogSources to read spec.image, so the fields OLM's default
 * catalogs set are enough.
 */
const CATALOG_SOURCE_SCHEMA = root({
  spec: {
    type: 'object',
    required: ['sourceType'],
    properties: {
      sourceType: str,
      image: str,
      address: str,
      configMap: str,
      displayName: str,
      publisher: str,
      description: str,
      priority: int,
      icon: { type: 'object', properties: { base64data: str, mediatype: str } },
      updateStrategy: { type: 'object', properties: { registryPoll: { type: 'object', properties: { interval: str } } } },
      grpcPodConfig: anyObject,
      secrets: strings,
    },
  },
  status: anyObject,
});

/** CustomResourceDefinition as apiextensions.k8s.io/v1 requires it (types.go: group, names.plural/kind, scope, versions). */
const CRD_SCHEMA = root({
  spec: {
    type: 'object',
    required: ['group', 'names', 'scope', 'versions'],
    properties: {
      group: str,
      names: { type: 'object', required: ['plural', 'kind'], properties: { plural: str, singular: str, kind: str, listKind: str, shortNames: strings, categories: strings } },
      scope: { type: 'string', enum: ['Cluster', 'Namespaced'] },
      versions: { type: 'array', items: anyObject },
      conversion: anyObject,
      preserveUnknownFields: { type: 'boolean' },
    },
  },
  status: anyObject,
});

const CORE_FIELD_LABELS: Record<string, string[]> = {
  secrets: ['type'],
  nodes: ['spec.unschedulable'],
  namespaces: ['status.phase'],
  certificatesigningrequests: ['spec.signerName'],
};

function builtIn(type: ResourceType, schema: JsonSchema, opts: { singular: string; shortNames?: string[]; subresources?: Subresource[] }): ServedResource {
  return {
    type,
    singular: opts.singular,
    listKind: `${type.kind}List`,
    shortNames: opts.shortNames ?? [],
    categories: [],
    subresources: opts.subresources ?? [],
    schema,
    builtIn: true,
    tracksGeneration: false,
    allowsUnconditionalUpdate: true,
    fieldLabels: CORE_FIELD_LABELS[type.plural] ?? [],
  };
}

export function fromCrd(type: ResourceType, crd: CrdInfo, extra: Partial<ServedResource> = {}): ServedResource {
  if (crd.version !== type.version || crd.plural !== type.plural || crd.namespaced !== type.namespaced) {
    throw new Error(`CRD ${crd.file} does not match ${type.group}/${type.version} ${type.plural}`);
  }
  return {
    type,
    singular: crd.singular,
    listKind: crd.listKind,
    shortNames: crd.shortNames,
    categories: crd.categories,
    subresources: crd.subresources.status ? ['status'] : [],
    schema: crd.schema,
    builtIn: false,
    tracksGeneration: true,
    allowsUnconditionalUpdate: false,
    fieldLabels: [],
    crdFile: crd.file,
    ...extra,
  };
}

/** Parses "4.16", "4.16.3", "v4.12.0-rc.1" into the OpenShift 4.x minor. */
export function openShiftMinor(clusterVersion: string): number {
  const m = /^v?4\.(\d+)/.exec(clusterVersion);
  if (!m) throw new Error(`clusterVersion must look like 4.<minor>[.<patch>], got "${clusterVersion}"`);
  return Number(m[1]);
}

/**
 * The resources the simulator serves from an openshift/api CRD schema (test/sim/schemas/openshift-api/, one
 * compact file per kind, <plural>.<group>.yaml, listed in its README), with what differs from a plain CRD-backed resource.
 */
export const SERVED_FROM_CRDS: readonly { type: ResourceType; served?: Partial<ServedResource> }[] = [
  { type: R.clusterVersions },
  { type: R.clusterOperators },
  { type: R.infrastructures },
  { type: R.dnses },
  { type: R.ingresses },
  { type: R.apiServers },
  { type: R.images },
  { type: R.proxies },
  { type: R.networks },
  { type: R.imageDigestMirrorSets, served: { sinceMinor: 13 } },
  { type: R.imageTagMirrorSets, served: { sinceMinor: 13 } },
  { type: R.imageContentSourcePolicies },
  { type: R.ingressControllers },
  // Routes are served by openshift-apiserver as a Go type (not a CRD): strategic merge works there.
  { type: R.routes, served: { builtIn: true } },
  { type: R.machineConfigs },
];

/** The resource a stored CustomResourceDefinition object serves; throws when its names or schema are not acceptable. */
export function servedFromCrdObject(crd: KubeObject): ServedResource {
  const doc = crd as unknown as CrdDocument;
  const spec = doc.spec;
  if (!spec) throw new Error('spec is required');
  if (crd.metadata?.name !== `${spec.names.plural}.${spec.group}`) throw new Error(`metadata.name must be ${spec.names.plural}.${spec.group}`);
  const info = crdInfoOf(doc, `CustomResourceDefinition ${crd.metadata?.name}`);
  return fromCrd({ group: info.group, version: info.version, plural: info.plural, kind: info.kind, namespaced: info.namespaced }, info);
}

export class ResourceRegistry {
  readonly all: ServedResource[];
  private readonly byKey = new Map<string, ServedResource>();

  constructor(
    readonly clusterVersion: string,
    crdDir?: string,
  ) {
    const minor = openShiftMinor(clusterVersion);
    const crds = loadCrds(crdDir);
    const crd = (type: ResourceType) => {
      const c = crds.find((x) => x.group === type.group && x.plural === type.plural);
      if (!c) throw new Error(`no CRD for ${type.kind} (${type.plural}.${type.group}) in ${crdDir ?? CRD_DIR}; write ${type.plural}.${type.group}.yaml in test/sim/schemas/openshift-api from the openshift/api type at the README's commit`);
      return c;
    };
    const candidates: ServedResource[] = [
      builtIn(R.namespaces, NAMESPACE_SCHEMA, { singular: 'namespace', shortNames: ['ns'], subresources: ['status'] }),
      builtIn(R.nodes, NODE_SCHEMA, { singular: 'node', shortNames: ['no'], subresources: ['status'] }),
      builtIn(R.secrets, SECRET_SCHEMA, { singular: 'secret' }),
      builtIn(R.configMaps, CONFIGMAP_SCHEMA, { singular: 'configmap', shortNames: ['cm'] }),
      builtIn(R.csrs, CSR_SCHEMA, { singular: 'certificatesigningrequest', shortNames: ['csr'], subresources: ['approval', 'status'] }),
      // Served by the apiextensions-apiserver inside kube-apiserver; the establishing controller
      // (test/sim/cluster/crds.ts) serves each one's kind once its names are accepted.
      { ...builtIn(R.customResourceDefinitions, CRD_SCHEMA, { singular: 'customresourcedefinition', shortNames: ['crd', 'crds'], subresources: ['status'] }), tracksGeneration: true },
      ...SERVED_FROM_CRDS.map(({ type, served }) => fromCrd(type, crd(type), served)),
      {
        type: R.machineConfigPools,
        singular: 'machineconfigpool',
        listKind: 'MachineConfigPoolList',
        shortNames: ['mcp'],
        categories: [],
        subresources: ['status'],
        schema: MCP_SCHEMA,
        builtIn: false,
        tracksGeneration: true,
        allowsUnconditionalUpdate: false,
        fieldLabels: [],
      },
      {
        type: R.catalogSources,
        singular: 'catalogsource',
        listKind: 'CatalogSourceList',
        shortNames: ['catsrc'],
        categories: ['olm'],
        subresources: ['status'],
        schema: CATALOG_SOURCE_SCHEMA,
        builtIn: false,
        tracksGeneration: true,
        // A custom resource of OLM's: no unconditional update (apiextensions customresource strategy.go).
        allowsUnconditionalUpdate: false,
        fieldLabels: [],
      },
    ];
    this.all = candidates.filter((r) => r.sinceMinor === undefined || minor >= r.sinceMinor);
    for (const r of this.all) this.byKey.set(`${r.type.group}/${r.type.plural}`, r);
  }

  /** Serves one more resource (a custom resource whose CRD was just established); replaces one of the same group and plural. */
  register(r: ServedResource): void {
    const key = `${r.type.group}/${r.type.plural}`;
    const at = this.all.findIndex((x) => `${x.type.group}/${x.type.plural}` === key);
    if (at >= 0) this.all.splice(at, 1, r);
    else this.all.push(r);
    this.byKey.set(key, r);
  }

  /** The served resource for a type (any version of its group/plural is matched on version too); 404 when not served. */
  resolve(type: Pick<ResourceType, 'group' | 'plural'> & { version?: string }): ServedResource {
    const r = this.byKey.get(`${type.group}/${type.plural}`);
    if (!r || (type.version !== undefined && r.type.version !== type.version)) throw noSuchResource();
    return r;
  }

  find(group: string, version: string, plural: string): ServedResource | undefined {
    const r = this.byKey.get(`${group}/${plural}`);
    return r && r.type.version === version ? r : undefined;
  }

  hasStatus(r: ServedResource): boolean {
    return r.subresources.includes('status');
  }
}

export function apiVersionOf(type: ResourceType): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}
