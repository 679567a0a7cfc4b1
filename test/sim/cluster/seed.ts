// The state of a single-node OpenShift as installed and validated in a factory: the config.openshift.io
// singletons, the ClusterVersion and the SNO set of ClusterOperators, the IngressController, the signer
// and serving secrets under their real names, the routes (operator-owned, generated and explicit), the
// machine-config pools and MachineConfigs, and the Node. Every object is written through the store, so each
// is validated against the real CRD schemas (OLM's CatalogSource against a minimal one, see apiserver/resources.ts).
import { randomBytes, randomUUID } from 'node:crypto';
import { R } from '../../../src/cluster/resources';
import type { KubeObject, ResourceType } from '../../../src/cluster/types';
import { issueServerCert, type CertificateAuthority } from '../pki';
import type { SimStore } from '../store-types';
import type { SimClock } from './clock';
import { nodeLabels } from './kubelet';
import { clusterNames, minorVersion, type ResolvedOptions } from './options';
import { b64 } from './x509';
import { stringify } from 'yaml';

/** The cluster's signers (OpenShift keeps each in a kubernetes.io/tls secret, tls.crt + tls.key). */
export interface ClusterSigners {
  /** openshift-kube-apiserver-operator/loadbalancer-serving-signer, CN kube-apiserver-lb-signer (installer asset kube-apiserver-lb-signer). */
  lbSigner: CertificateAuthority;
  /** openshift-ingress-operator/router-ca (cluster-ingress-operator certificate/ca.go, "router-ca"). */
  routerCa: CertificateAuthority;
  /** The kube-controller-manager's kubelet-serving CSR signer, published in openshift-config-managed/csr-controller-ca. */
  csrSigner: CertificateAuthority;
}

export const SIGNER_SECRETS = {
  lbSigner: { namespace: 'openshift-kube-apiserver-operator', name: 'loadbalancer-serving-signer' },
  routerCa: { namespace: 'openshift-ingress-operator', name: 'router-ca' },
  csrSigner: { namespace: 'openshift-kube-controller-manager-operator', name: 'csr-signer' },
} as const;

/** The SNO set of ClusterOperators (4.14, platform None, default capabilities) and their namespaces. */
export const CLUSTER_OPERATORS: Record<string, string> = {
  authentication: 'openshift-authentication-operator',
  baremetal: 'openshift-machine-api',
  'cloud-controller-manager': 'openshift-cloud-controller-manager-operator',
  'cloud-credential': 'openshift-cloud-credential-operator',
  'cluster-autoscaler': 'openshift-machine-api',
  'config-operator': 'openshift-config-operator',
  console: 'openshift-console-operator',
  'control-plane-machine-set': 'openshift-machine-api',
  'csi-snapshot-controller': 'openshift-cluster-storage-operator',
  dns: 'openshift-dns-operator',
  etcd: 'openshift-etcd-operator',
  'image-registry': 'openshift-image-registry',
  ingress: 'openshift-ingress-operator',
  insights: 'openshift-insights',
  'kube-apiserver': 'openshift-kube-apiserver-operator',
  'kube-controller-manager': 'openshift-kube-controller-manager-operator',
  'kube-scheduler': 'openshift-kube-scheduler-operator',
  'kube-storage-version-migrator': 'openshift-kube-storage-version-migrator-operator',
  'machine-api': 'openshift-machine-api',
  'machine-approver': 'openshift-cluster-machine-approver',
  'machine-config': 'openshift-machine-config-operator',
  marketplace: 'openshift-marketplace',
  monitoring: 'openshift-monitoring',
  network: 'openshift-network-operator',
  'node-tuning': 'openshift-cluster-node-tuning-operator',
  'openshift-apiserver': 'openshift-apiserver-operator',
  'openshift-controller-manager': 'openshift-controller-manager-operator',
  'openshift-samples': 'openshift-cluster-samples-operator',
  'operator-lifecycle-manager': 'openshift-operator-lifecycle-manager',
  'operator-lifecycle-manager-catalog': 'openshift-operator-lifecycle-manager',
  'operator-lifecycle-manager-packageserver': 'openshift-operator-lifecycle-manager',
  'service-ca': 'openshift-service-ca-operator',
  storage: 'openshift-cluster-storage-operator',
};

const EXTRA_NAMESPACES = [
  'default',
  'kube-system',
  'kube-public',
  'openshift',
  'openshift-config',
  'openshift-config-managed',
  'openshift-kube-apiserver',
  'openshift-apiserver',
  'openshift-authentication',
  'openshift-oauth-apiserver',
  'openshift-console',
  'openshift-ingress',
  'openshift-kube-controller-manager',
  'openshift-cluster-version',
  'openshift-machine-config-operator',
  'openshift-monitoring',
  // user workloads installed and tested at the factory
  'shop',
  'inventory',
];

export interface SeedInput {
  opts: ResolvedOptions;
  signers: ClusterSigners;
  clock: SimClock;
  /** The CA the kube-apiserver serves with and trusts for client certificates. */
  apiCa: CertificateAuthority;
  /** Runs `fn` with the store's clock at install time (INSTALLED_AGO_MS ago), so what it creates is dated then. */
  atInstall?: <T>(fn: () => T) => T;
}

/** How long before the simulator starts the cluster was installed. */
export const INSTALLED_AGO_MS = 3 * 24 * 3600_000;

/** A bcrypt hash in the form the installer writes (cost 10); the password behind it is nobody's. */
function installerKubeadminHash(): string {
  const alphabet = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return `$2a$10$${Array.from(randomBytes(53), (b) => alphabet[b % 64]).join('')}`;
}

/** Everything the simulator needs to know about what it seeded (also recomputable from the store). */
export interface SeedResult {
  infrastructureName: string;
}

function tlsSecret(namespace: string, name: string, certPem: string, keyPem: string, annotations: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, annotations },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(certPem), 'tls.key': b64(keyPem) },
  };
}

function configMap(namespace: string, name: string, data: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
}

/** Creates an object, then writes its status through the status subresource (create ignores status there). */
function put(store: SimStore, type: ResourceType, obj: KubeObject): KubeObject {
  const status = obj.status;
  const { status: _ignored, ...withoutStatus } = obj;
  const created = store.create(type, withoutStatus as KubeObject);
  if (status === undefined) return created;
  created.status = status;
  return store.updateStatus(type, created);
}

function condition(type: string, status: 'True' | 'False' | 'Unknown', reason: string, message: string, at: string) {
  return { type, status, reason, message, lastTransitionTime: at };
}

/** A plausible release image digest for the version (stable per version). */
function releaseDigest(version: string): string {
  let h = 0x811c9dc5;
  const out: string[] = [];
  for (let i = 0; i < 64; i++) {
    h ^= version.charCodeAt(i % version.length) + i;
    h = Math.imul(h, 0x01000193) >>> 0;
    out.push((h & 0xf).toString(16));
  }
  return out.join('');
}

export function seedCluster(store: SimStore, input: SeedInput): SeedResult {
  const { opts, signers, clock, apiCa } = input;
  const names = clusterNames(opts);
  const installedAt = clock.iso(clock.now() - INSTALLED_AGO_MS);
  const version = opts.version;
  const image = `quay.io/openshift-release-dev/ocp-release@sha256:${releaseDigest(version)}`;
  const infrastructureName = `${opts.clusterName}-${randomBytes(3).toString('hex').slice(0, 5)}`;

  const atInstall = input.atInstall ?? (<T>(fn: () => T) => fn());
  atInstall(() => {
    for (const ns of [...new Set([...EXTRA_NAMESPACES, ...Object.values(CLUSTER_OPERATORS)])]) {
      store.create(R.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'kubernetes.io/metadata.name': ns } } });
    }
    // The installer's kubeadmin password, as its bcrypt hash (openshift/installer pkg/asset/password/password.go,
    // openshift/99_kubeadmin-password-secret.yaml), created with the cluster: the bootstrap authenticator honours it
    // only because it is no more than an hour younger than kube-system (bootstrap-user.ts).
    store.create(R.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'kubeadmin', namespace: 'kube-system' }, type: 'Opaque', data: { kubeadmin: b64(installerKubeadminHash()) } });
  });

  // --- signers and serving certificates, under the names the operators use -----------------------------
  const signerAnnotations = (description: string) => ({ 'openshift.io/owning-component': 'kube-apiserver', 'openshift.io/description': description });
  store.create(
    R.secrets,
    tlsSecret(SIGNER_SECRETS.lbSigner.namespace, SIGNER_SECRETS.lbSigner.name, signers.lbSigner.certPem, signers.lbSigner.keyPem, signerAnnotations(
      'Signer used by the kube-apiserver operator to create serving certificates for the kube-apiserver via internal and external load balancers.',
    )),
  );
  store.create(R.secrets, tlsSecret(SIGNER_SECRETS.routerCa.namespace, SIGNER_SECRETS.routerCa.name, signers.routerCa.certPem, signers.routerCa.keyPem));
  store.create(R.secrets, tlsSecret(SIGNER_SECRETS.csrSigner.namespace, SIGNER_SECRETS.csrSigner.name, signers.csrSigner.certPem, signers.csrSigner.keyPem));
  // RSA, as the operators issue them (library-go crypto); see apiserver/server.ts for why it matters here.
  const external = issueServerCert(signers.lbSigner, { dnsNames: [names.api], validityDays: 30, keyType: 'rsa' });
  const internal = issueServerCert(signers.lbSigner, { dnsNames: [names.apiInt], validityDays: 30, keyType: 'rsa' });
  store.create(R.secrets, tlsSecret('openshift-kube-apiserver', 'external-loadbalancer-serving-certkey', external.certPem, external.keyPem));
  store.create(R.secrets, tlsSecret('openshift-kube-apiserver', 'internal-loadbalancer-serving-certkey', internal.certPem, internal.keyPem));
  const wildcard = issueServerCert(signers.routerCa, { dnsNames: [`*.${names.apps}`], validityDays: 730, keyType: 'rsa' });
  store.create(R.secrets, tlsSecret('openshift-ingress', 'router-certs-default', wildcard.certPem, wildcard.keyPem));
  store.create(R.configMaps, configMap('openshift-config-managed', 'default-ingress-cert', { 'ca-bundle.crt': signers.routerCa.certPem }));
  store.create(R.configMaps, configMap('openshift-config-managed', 'kube-apiserver-server-ca', { 'ca-bundle.crt': `${signers.lbSigner.certPem}${apiCa.certPem}` }));
  store.create(R.configMaps, configMap('openshift-config-managed', 'csr-controller-ca', { 'ca-bundle.crt': signers.csrSigner.certPem }));
  store.create(R.configMaps, configMap('openshift-config', 'admin-kubeconfig-client-ca', { 'ca-bundle.crt': apiCa.certPem }));

  // --- the global pull secret (docs images-update-global-pull-secret: type dockerconfigjson, one key) --------
  const auth = (user: string) => Buffer.from(`${user}:factory-token-${randomBytes(6).toString('hex')}`).toString('base64');
  const dockerconfig = {
    auths: {
      'cloud.openshift.com': { auth: auth('factory'), email: 'factory@example.com' },
      'quay.io': { auth: auth('factory'), email: 'factory@example.com' },
      'registry.connect.redhat.com': { auth: auth('factory'), email: 'factory@example.com' },
      'registry.redhat.io': { auth: auth('factory'), email: 'factory@example.com' },
    },
  };
  store.create(R.secrets, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'pull-secret', namespace: 'openshift-config' },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': b64(JSON.stringify(dockerconfig)) },
  });

  // --- config.openshift.io singletons -------------------------------------------------------------------
  put(store, R.infrastructures, {
    apiVersion: 'config.openshift.io/v1',
    kind: 'Infrastructure',
    metadata: { name: 'cluster' },
    spec: { cloudConfig: { name: '' }, platformSpec: { type: 'None' } },
    status: {
      apiServerURL: `https://${names.api}:6443`,
      apiServerInternalURI: `https://${names.apiInt}:6443`,
      controlPlaneTopology: 'SingleReplica',
      infrastructureTopology: 'SingleReplica',
      cpuPartitioning: 'None',
      etcdDiscoveryDomain: '',
      infrastructureName,
      platform: 'None',
      platformStatus: { type: 'None' },
    },
  });
  put(store, R.dnses, { apiVersion: 'config.openshift.io/v1', kind: 'DNS', metadata: { name: 'cluster' }, spec: { baseDomain: names.clusterDomain }, status: {} });
  put(store, R.apiServers, { apiVersion: 'config.openshift.io/v1', kind: 'APIServer', metadata: { name: 'cluster' }, spec: { audit: { profile: 'Default' } }, status: {} });
  put(store, R.images, {
    apiVersion: 'config.openshift.io/v1',
    kind: 'Image',
    metadata: { name: 'cluster' },
    spec: {},
    status: { internalRegistryHostname: 'image-registry.openshift-image-registry.svc:5000' },
  });
  // The networks as the installer records them: Network/cluster (its status is the network operator's,
  // config/v1 types_network.go), and install-config in kube-system/cluster-config-v1, where the network
  // operator reads the machine networks for the proxy's noProxy (cluster-network-operator
  // pkg/util/proxyconfig/no_proxy.go). Installer defaults: cluster 10.128.0.0/14 (/23 per node), service 172.30.0.0/16.
  const clusterNetwork = [{ cidr: '10.128.0.0/14', hostPrefix: 23 }];
  const serviceNetwork = ['172.30.0.0/16'];
  const machineNetwork = opts.nodeIPs.map((ip) => ({ cidr: machineCidr(ip) }));
  // The Network CRD has no status subresource: the status is written with the object.
  store.create(R.networks, {
    apiVersion: 'config.openshift.io/v1',
    kind: 'Network',
    metadata: { name: 'cluster' },
    spec: { clusterNetwork, serviceNetwork, networkType: 'OVNKubernetes', externalIP: { policy: {} } },
    status: { clusterNetwork, serviceNetwork, networkType: 'OVNKubernetes', clusterNetworkMTU: 1400 },
  });
  put(store, R.configMaps, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cluster-config-v1', namespace: 'kube-system' },
    data: {
      'install-config': stringify({
        apiVersion: 'v1',
        baseDomain: opts.baseDomain,
        metadata: { name: opts.clusterName },
        controlPlane: { name: 'master', replicas: 1 },
        compute: [{ name: 'worker', replicas: 0 }],
        networking: { clusterNetwork, machineNetwork, networkType: 'OVNKubernetes', serviceNetwork },
        platform: { none: {} },
        pullSecret: '',
      }),
    },
  });
  // Proxy/cluster exists from the install on, with an empty spec when install-config has no proxy (installer
  // pkg/asset/manifests/proxy.go).
  put(store, R.proxies, { apiVersion: 'config.openshift.io/v1', kind: 'Proxy', metadata: { name: 'cluster' }, spec: { trustedCA: { name: '' } }, status: {} });
  const routeStatus = (namespace: string, name: string, defaultHostname: string, consumingUser: string) => ({
    namespace,
    name,
    defaultHostname,
    currentHostnames: [defaultHostname],
    consumingUsers: [consumingUser],
    relatedObjects: [{ group: 'route.openshift.io', resource: 'routes', namespace, name }],
    conditions: [
      { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'All is well', lastTransitionTime: installedAt },
      { type: 'Progressing', status: 'False', reason: 'AsExpected', message: 'All is well', lastTransitionTime: installedAt },
    ],
  });
  put(store, R.ingresses, {
    apiVersion: 'config.openshift.io/v1',
    kind: 'Ingress',
    metadata: { name: 'cluster' },
    spec: { domain: names.apps, loadBalancer: { platform: { type: '' } } },
    status: {
      defaultPlacement: 'ControlPlane',
      componentRoutes: [
        routeStatus('openshift-authentication', 'oauth-openshift', `oauth-openshift.${names.apps}`, 'system:serviceaccount:oauth-openshift:authentication-operator'),
        routeStatus('openshift-console', 'console', `console-openshift-console.${names.apps}`, 'system:serviceaccount:openshift-console-operator:console-operator'),
        routeStatus('openshift-console', 'downloads', `downloads-openshift-console.${names.apps}`, 'system:serviceaccount:openshift-console-operator:console-operator'),
      ],
    },
  });

  // --- ClusterVersion: installed, not upgrading -------------------------------------------------------
  const minor = minorVersion(version);
  put(store, R.clusterVersions, {
    apiVersion: 'config.openshift.io/v1',
    kind: 'ClusterVersion',
    metadata: { name: 'version' },
    spec: { clusterID: randomUUID(), channel: `stable-4.${minor}` },
    status: {
      availableUpdates: [],
      desired: { version, image, channels: [`candidate-4.${minor}`, `eus-4.${minor}`, `fast-4.${minor}`, `stable-4.${minor}`] },
      history: [{ state: 'Completed', version, image, verified: false, startedTime: installedAt, completionTime: installedAt }],
      observedGeneration: 1,
      versionHash: randomBytes(8).toString('base64url').slice(0, 11),
      capabilities: {
        enabledCapabilities: ['Build', 'CSISnapshot', 'Console', 'DeploymentConfig', 'ImageRegistry', 'Insights', 'MachineAPI', 'NodeTuning', 'Storage', 'baremetal', 'marketplace', 'openshift-samples'],
        knownCapabilities: ['Build', 'CSISnapshot', 'Console', 'DeploymentConfig', 'ImageRegistry', 'Insights', 'MachineAPI', 'NodeTuning', 'Storage', 'baremetal', 'marketplace', 'openshift-samples'],
      },
      conditions: [
        condition('RetrievedUpdates', 'False', 'RemoteFailed', 'Unable to retrieve available updates: the site is disconnected from the update service', installedAt),
        condition('Available', 'True', '', `Done applying ${version}`, installedAt),
        condition('Failing', 'False', '', '', installedAt),
        condition('Progressing', 'False', '', `Cluster version is ${version}`, installedAt),
      ],
    },
  });

  // --- ClusterOperators ----------------------------------------------------------------------------------
  const kubeVersion = `1.${minor + 13}.10`;
  for (const [name, namespace] of Object.entries(CLUSTER_OPERATORS)) {
    const versions = [{ name: 'operator', version }];
    if (name === 'kube-apiserver' || name === 'kube-controller-manager' || name === 'kube-scheduler') versions.push({ name: name, version: kubeVersion });
    if (name === 'openshift-apiserver') versions.push({ name: 'openshift-apiserver', version });
    if (name === 'etcd') versions.push({ name: 'etcd', version });
    put(store, R.clusterOperators, {
      apiVersion: 'config.openshift.io/v1',
      kind: 'ClusterOperator',
      metadata: { name, annotations: { 'include.release.openshift.io/single-node-developer': 'true' } },
      spec: {},
      status: {
        conditions: [
          condition('Degraded', 'False', 'AsExpected', 'All is well', installedAt),
          condition('Progressing', 'False', 'AsExpected', 'All is well', installedAt),
          condition('Available', 'True', 'AsExpected', 'All is well', installedAt),
          condition('Upgradeable', 'True', 'AsExpected', 'All is well', installedAt),
        ],
        versions,
        relatedObjects: [
          { group: 'operator.openshift.io', resource: name.replace(/-/g, '') + 's', name: 'cluster' },
          { group: '', resource: 'namespaces', name: namespace },
        ],
      },
    });
  }

  // --- the default IngressController (HostNetwork on platform None) ---------------------------------------
  put(store, R.ingressControllers, {
    apiVersion: 'operator.openshift.io/v1',
    kind: 'IngressController',
    metadata: { name: 'default', namespace: 'openshift-ingress-operator', finalizers: ['ingresscontroller.operator.openshift.io/finalizer-ingresscontroller'] },
    spec: { replicas: 1, httpErrorCodePages: { name: '' } },
    status: {
      availableReplicas: 1,
      domain: names.apps,
      endpointPublishingStrategy: { type: 'HostNetwork', hostNetwork: { protocol: 'TCP', httpPort: 80, httpsPort: 443, statsPort: 1936 } },
      selector: 'ingresscontroller.operator.openshift.io/deployment-ingresscontroller=default',
      observedGeneration: 1,
      tlsProfile: { minTLSVersion: 'VersionTLS12', ciphers: ['ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384', 'ECDHE-RSA-AES256-GCM-SHA384'] },
      conditions: [
        condition('Admitted', 'True', 'Valid', '', installedAt),
        condition('Available', 'True', 'Valid', '', installedAt),
        condition('DeploymentAvailable', 'True', 'DeploymentAvailable', 'The deployment has Available status condition set to True', installedAt),
        condition('DeploymentRollingOut', 'False', 'DeploymentNotRollingOut', 'Deployment is not actively rolling out', installedAt),
        condition('Progressing', 'False', 'AsExpected', '', installedAt),
        condition('Degraded', 'False', 'AsExpected', '', installedAt),
      ],
    },
  });

  // --- routes: operator-owned, generated (host.generated) and explicit, inside and outside the apps domain --
  const routerCanonical = `router-default.${names.apps}`;
  const route = (namespace: string, name: string, host: string, generated: boolean, service: string, tls?: Record<string, unknown>): KubeObject => ({
    apiVersion: 'route.openshift.io/v1',
    kind: 'Route',
    metadata: { name, namespace, ...(generated ? { annotations: { 'openshift.io/host.generated': 'true' } } : {}) },
    spec: { host, to: { kind: 'Service', name: service, weight: 100 }, port: { targetPort: 'https' }, wildcardPolicy: 'None', ...(tls ? { tls } : {}) },
    status: {
      ingress: [
        { host, routerName: 'default', routerCanonicalHostname: routerCanonical, wildcardPolicy: 'None', conditions: [{ type: 'Admitted', status: 'True', lastTransitionTime: installedAt }] },
      ],
    },
  });
  const routes = [
    route('openshift-console', 'console', `console-openshift-console.${names.apps}`, false, 'console', { termination: 'reencrypt', insecureEdgeTerminationPolicy: 'Redirect' }),
    route('openshift-console', 'downloads', `downloads-openshift-console.${names.apps}`, false, 'downloads', { termination: 'edge', insecureEdgeTerminationPolicy: 'Redirect' }),
    route('openshift-authentication', 'oauth-openshift', `oauth-openshift.${names.apps}`, false, 'oauth-openshift', { termination: 'passthrough', insecureEdgeTerminationPolicy: 'Redirect' }),
    route('openshift-monitoring', 'prometheus-k8s', `prometheus-k8s-openshift-monitoring.${names.apps}`, true, 'prometheus-k8s', { termination: 'reencrypt', insecureEdgeTerminationPolicy: 'Redirect' }),
    route('openshift-monitoring', 'alertmanager-main', `alertmanager-main-openshift-monitoring.${names.apps}`, true, 'alertmanager-main', { termination: 'reencrypt', insecureEdgeTerminationPolicy: 'Redirect' }),
    route('openshift-monitoring', 'thanos-querier', `thanos-querier-openshift-monitoring.${names.apps}`, true, 'thanos-querier', { termination: 'reencrypt', insecureEdgeTerminationPolicy: 'Redirect' }),
    route('shop', 'storefront', `storefront-shop.${names.apps}`, true, 'storefront', { termination: 'edge', insecureEdgeTerminationPolicy: 'Redirect' }),
    route('shop', 'checkout', `checkout.${names.apps}`, false, 'checkout', { termination: 'edge' }),
    route('inventory', 'dashboard', 'inventory.corp.example.net', false, 'dashboard', { termination: 'edge' }),
  ];
  for (const r of routes) put(store, R.routes, r);

  // --- OLM's default catalogs, index images pulled by tag v4.<minor> (operator-marketplace defaults/) -------
  const catalog = (name: string, displayName: string, priority: number, index: string): KubeObject => ({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { name, namespace: 'openshift-marketplace', annotations: { 'operatorframework.io/managed-by': 'marketplace-operator' } },
    spec: { sourceType: 'grpc', image: `registry.redhat.io/redhat/${index}:v4.${minor}`, displayName, publisher: 'Red Hat', priority, updateStrategy: { registryPoll: { interval: '10m' } } },
  });
  for (const c of [
    catalog('certified-operators', 'Certified Operators', -200, 'certified-operator-index'),
    catalog('community-operators', 'Community Operators', -400, 'community-operator-index'),
    catalog('redhat-marketplace', 'Red Hat Marketplace', -300, 'redhat-marketplace-index'),
    catalog('redhat-operators', 'Red Hat Operators', -100, 'redhat-operator-index'),
  ]) store.create(R.catalogSources, c);

  // --- machine config: pools and the MachineConfigs the installer and MCO create ---------------------------
  const mc = (name: string, role: string, generated: boolean, spec: Record<string, unknown>): KubeObject => ({
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfig',
    metadata: {
      name,
      labels: { 'machineconfiguration.openshift.io/role': role },
      ...(generated ? { annotations: { 'machineconfiguration.openshift.io/generated-by-controller-version': `sim-${version}` } } : {}),
    },
    spec,
  });
  const ign = { ignition: { version: '3.2.0' } };
  for (const role of ['master', 'worker']) {
    store.create(R.machineConfigs, mc(`00-${role}`, role, true, { config: ign, extensions: [], fips: false, kernelArguments: [], kernelType: 'default', osImageURL: '' }));
    store.create(R.machineConfigs, mc(`01-${role}-container-runtime`, role, true, { config: ign }));
    store.create(R.machineConfigs, mc(`01-${role}-kubelet`, role, true, { config: ign }));
    store.create(R.machineConfigs, mc(`97-${role}-generated-kubelet`, role, true, { config: ign }));
    store.create(R.machineConfigs, mc(`99-${role}-generated-registries`, role, true, { config: ign }));
    store.create(R.machineConfigs, mc(`99-${role}-ssh`, role, false, { config: { ignition: { version: '3.2.0' }, passwd: { users: [{ name: 'core', sshAuthorizedKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFactoryKeyForSimulatedSNO factory@example.com'] }] } } }));
  }
  for (const role of ['master', 'worker']) {
    put(store, R.machineConfigPools, {
      apiVersion: 'machineconfiguration.openshift.io/v1',
      kind: 'MachineConfigPool',
      metadata: {
        name: role,
        labels: { 'machineconfiguration.openshift.io/mco-built-in': '', [`pools.operator.machineconfiguration.openshift.io/${role}`]: '', ...(role === 'master' ? { 'operator.machineconfiguration.openshift.io/required-for-upgrade': '' } : {}) },
      },
      spec: {
        machineConfigSelector: { matchLabels: { 'machineconfiguration.openshift.io/role': role } },
        nodeSelector: { matchLabels: { [`node-role.kubernetes.io/${role}`]: '' } },
        paused: false,
      },
      status:
        role === 'worker'
          ? {
              machineCount: 0,
              readyMachineCount: 0,
              updatedMachineCount: 0,
              unavailableMachineCount: 0,
              degradedMachineCount: 0,
              observedGeneration: 1,
              conditions: [
                condition('Updated', 'True', '', 'All nodes are updated', installedAt),
                condition('Updating', 'False', '', '', installedAt),
                condition('Degraded', 'False', '', '', installedAt),
              ],
            }
          : undefined,
    });
  }

  // --- the Node: registered at the factory; its kubelet stopped when the node was shut down ----------------
  const running = opts.kubelet === 'running';
  const kubeMinor = minor + 13;
  const nodeConds = running
    ? [
        condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available', installedAt),
        condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure', installedAt),
        condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available', installedAt),
        condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status', installedAt),
      ]
    : ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'].map((t) => condition(t, 'Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.', installedAt));
  put(store, R.nodes, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: opts.nodeName,
      labels: nodeLabels(opts.nodeName),
      annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true', 'machineconfiguration.openshift.io/state': 'Done' },
    },
    spec: running
      ? {}
      : {
          taints: [
            { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule', timeAdded: installedAt },
            { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: installedAt },
          ],
        },
    status: {
      addresses: [...opts.nodeIPs.map((address) => ({ type: 'InternalIP', address })), { type: 'Hostname', address: opts.nodeName }],
      capacity: { cpu: '16', memory: '65776008Ki', pods: '250', 'ephemeral-storage': '249935852Ki' },
      allocatable: { cpu: '15500m', memory: '64625032Ki', pods: '250', 'ephemeral-storage': '229266473528' },
      conditions: nodeConds.map((c) => ({ ...c, lastHeartbeatTime: installedAt })),
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        architecture: 'amd64',
        bootID: randomUUID(),
        containerRuntimeVersion: `cri-o://1.${kubeMinor}.0`,
        kernelVersion: '5.14.0-284.48.1.el9_2.x86_64',
        kubeProxyVersion: `v1.${kubeMinor}.0+sim`,
        kubeletVersion: `v1.${kubeMinor}.0+sim`,
        machineID: randomBytes(16).toString('hex'),
        operatingSystem: 'linux',
        osImage: `Red Hat Enterprise Linux CoreOS ${version.split('.').slice(0, 2).join('')}.92.202401010000-0 (Plow)`,
        systemUUID: randomUUID(),
      },
    },
  });
  return { infrastructureName };
}

/** The signers as stored (after a restart the store is the source of truth). */
export function signersFromStore(store: SimStore): ClusterSigners | undefined {
  const read = (ns: string, name: string, caName: string): CertificateAuthority | undefined => {
    const s = store.get(R.secrets, name, ns);
    const data = (s?.data ?? {}) as Record<string, string>;
    if (!data['tls.crt'] || !data['tls.key']) return undefined;
    return { name: caName, certPem: Buffer.from(data['tls.crt'], 'base64').toString('utf8'), keyPem: Buffer.from(data['tls.key'], 'base64').toString('utf8') };
  };
  const lbSigner = read(SIGNER_SECRETS.lbSigner.namespace, SIGNER_SECRETS.lbSigner.name, 'kube-apiserver-lb-signer');
  const routerCa = read(SIGNER_SECRETS.routerCa.namespace, SIGNER_SECRETS.routerCa.name, 'router-ca');
  const csrSigner = read(SIGNER_SECRETS.csrSigner.namespace, SIGNER_SECRETS.csrSigner.name, 'kube-csr-signer');
  return lbSigner && routerCa && csrSigner ? { lbSigner, routerCa, csrSigner } : undefined;
}

/** The factory's machine network of a node address: its /24 (IPv4) or /64 (IPv6). */
function machineCidr(ip: string): string {
  if (!ip.includes(':')) return `${ip.split('.').slice(0, 3).join('.')}.0/24`;
  const groups = ip.split('::')[0]!.split(':');
  return `${[...groups.slice(0, 4), ...Array(Math.max(0, 4 - groups.length)).fill('0')].join(':')}::/64`;
}
