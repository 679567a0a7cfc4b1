// The names a domain change is about, and the fixed names of what the agent owns in the cluster (the label
// that marks its objects is MANAGED_BY in src/cluster/objects.ts).
//
// Host names keep OpenShift's default patterns under the new apps domain so users recognise them:
// console-openshift-console, downloads-openshift-console and oauth-openshift (openshift-docs
// customizing-the-console-route.adoc, customizing-the-download-route.adoc; authentication operator
// custom_route_controller.go: "oauth-openshift." + domain).

export interface DomainNames {
  clusterName: string;
  baseDomain: string;
  /** api.<cluster>.<base> */
  api: string;
  /** apps.<cluster>.<base> */
  appsDomain: string;
  /** *.apps.<cluster>.<base> */
  appsWildcard: string;
  console: string;
  downloads: string;
  oauth: string;
}

export function domainNames(clusterName: string, baseDomain: string): DomainNames {
  const base = baseDomain.replace(/\.$/, '').toLowerCase();
  const cluster = clusterName.toLowerCase();
  const appsDomain = `apps.${cluster}.${base}`;
  return {
    clusterName: cluster,
    baseDomain: base,
    api: `api.${cluster}.${base}`,
    appsDomain,
    appsWildcard: `*.${appsDomain}`,
    console: `console-openshift-console.${appsDomain}`,
    downloads: `downloads-openshift-console.${appsDomain}`,
    oauth: `oauth-openshift.${appsDomain}`,
  };
}

/** A host name under a domain (the domain itself does not count). */
export function isUnder(host: string, domain: string): boolean {
  return host.toLowerCase().endsWith(`.${domain.toLowerCase()}`);
}

/** kubernetes.io/tls secrets the agent owns (deterministic names: a re-run updates, never piles up). */
export const SECRETS = {
  /** openshift-config: APIServer namedCertificates. */
  api: 'sno-reconfigure-api-cert',
  /** openshift-config (componentRoutes console/downloads) and openshift-ingress (IngressController default). */
  ingress: 'sno-reconfigure-ingress-cert',
  /** openshift-config: the OAuth componentRoute — its own certificate (see certificates.ts). */
  oauth: 'sno-reconfigure-oauth-cert',
} as const;

export const CONFIG_NAMESPACE = 'openshift-config';
/** IngressController spec.defaultCertificate must name a secret in openshift-ingress (openshift-docs "Setting a custom default certificate"). */
export const INGRESS_NAMESPACE = 'openshift-ingress';
export const INGRESS_OPERATOR_NAMESPACE = 'openshift-ingress-operator';
export const DEFAULT_INGRESS_CONTROLLER = 'default';

/**
 * The cluster's own CAs. Certificates they sign are trusted by every existing client:
 * - loadbalancer-serving-signer signs the kube-apiserver's external/internal load-balancer serving
 *   certificates; admin kubeconfigs carry it (cluster-kube-apiserver-operator bindata
 *   loadbalancer-serving-signer secret template: namespace openshift-kube-apiserver-operator, tls.crt/tls.key);
 * - router-ca signs the default ingress wildcard certificate; the ingress operator publishes it to the
 *   cluster's trust (cluster-ingress-operator pkg/operator/controller/certificate/ca.go: secret "router-ca"
 *   in the operator namespace, type kubernetes.io/tls, tls.crt/tls.key, RSA 2048, 2 years).
 */
export const SIGNERS = {
  api: { namespace: 'openshift-kube-apiserver-operator', name: 'loadbalancer-serving-signer' },
  ingress: { namespace: INGRESS_OPERATOR_NAMESPACE, name: 'router-ca' },
} as const;

export interface ComponentRouteRef {
  namespace: string;
  name: string;
}

/** The component routes the agent moves to the new domain (the three openshift-docs document). */
export const COMPONENT_ROUTES = {
  console: { namespace: 'openshift-console', name: 'console' },
  downloads: { namespace: 'openshift-console', name: 'downloads' },
  oauth: { namespace: 'openshift-authentication', name: 'oauth-openshift' },
} as const satisfies Record<string, ComponentRouteRef>;

export const routeKey = (r: ComponentRouteRef): string => `${r.namespace}/${r.name}`;
