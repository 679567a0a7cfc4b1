// Where each resource the agent reads or writes lives in the REST API.
import type { ResourceType } from './types';

const core = (plural: string, kind: string, namespaced: boolean): ResourceType => ({ group: '', version: 'v1', plural, kind, namespaced });
const config = (plural: string, kind: string): ResourceType => ({ group: 'config.openshift.io', version: 'v1', plural, kind, namespaced: false });

export const R = {
  namespaces: core('namespaces', 'Namespace', false),
  nodes: core('nodes', 'Node', false),
  secrets: core('secrets', 'Secret', true),
  configMaps: core('configmaps', 'ConfigMap', true),
  csrs: { group: 'certificates.k8s.io', version: 'v1', plural: 'certificatesigningrequests', kind: 'CertificateSigningRequest', namespaced: false },
  clusterVersions: config('clusterversions', 'ClusterVersion'),
  clusterOperators: config('clusteroperators', 'ClusterOperator'),
  infrastructures: config('infrastructures', 'Infrastructure'),
  dnses: config('dnses', 'DNS'),
  ingresses: config('ingresses', 'Ingress'),
  apiServers: config('apiservers', 'APIServer'),
  images: config('images', 'Image'),
  proxies: config('proxies', 'Proxy'),
  networks: config('networks', 'Network'),
  imageDigestMirrorSets: config('imagedigestmirrorsets', 'ImageDigestMirrorSet'),
  imageTagMirrorSets: config('imagetagmirrorsets', 'ImageTagMirrorSet'),
  imageContentSourcePolicies: { group: 'operator.openshift.io', version: 'v1alpha1', plural: 'imagecontentsourcepolicies', kind: 'ImageContentSourcePolicy', namespaced: false },
  ingressControllers: { group: 'operator.openshift.io', version: 'v1', plural: 'ingresscontrollers', kind: 'IngressController', namespaced: true },
  routes: { group: 'route.openshift.io', version: 'v1', plural: 'routes', kind: 'Route', namespaced: true },
  machineConfigs: { group: 'machineconfiguration.openshift.io', version: 'v1', plural: 'machineconfigs', kind: 'MachineConfig', namespaced: false },
  machineConfigPools: { group: 'machineconfiguration.openshift.io', version: 'v1', plural: 'machineconfigpools', kind: 'MachineConfigPool', namespaced: false },
  customResourceDefinitions: { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false },
  catalogSources: { group: 'operators.coreos.com', version: 'v1alpha1', plural: 'catalogsources', kind: 'CatalogSource', namespaced: true },
} as const satisfies Record<string, ResourceType>;

/** REST path of a collection or an object. */
export function resourcePath(type: ResourceType, namespace?: string, name?: string): string {
  const base = type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
  const ns = type.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${ns}/${type.plural}${name ? `/${encodeURIComponent(name)}` : ''}`;
}
