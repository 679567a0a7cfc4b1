// The cluster's public names: api.<clusterName>.<baseDomain> and *.apps.<clusterName>.<baseDomain>
// (openshift/installer pkg/types InstallConfig.ClusterDomain). Each field is a valid DNS label/name on its own
// (schema.ts); here the names they compose must still fit DNS limits (RFC 1035: 253 characters).
import { Findings } from './problems';

/** Placeholder used offline when spec.clusterName is absent: the shortest possible name, so only certain failures show. */
export const CLUSTER_NAME_PLACEHOLDER = 'x';

export function apiHost(clusterName: string, baseDomain: string): string {
  return `api.${clusterName}.${baseDomain}`;
}

export function appsDomain(clusterName: string, baseDomain: string): string {
  return `apps.${clusterName}.${baseDomain}`;
}

/** The longest host the cluster itself creates under the apps domain (the console route of openshift-console). */
export function consoleHost(clusterName: string, baseDomain: string): string {
  return `console-openshift-console.${appsDomain(clusterName, baseDomain)}`;
}

/** Length checks of the composed names. `assumed` says the cluster name is the placeholder. */
export function checkComposedNames(clusterName: string, baseDomain: string, assumed: boolean): Findings {
  const f = new Findings();
  const note = assumed ? ` even with a 1-character cluster name (spec.clusterName is not given)` : '';
  const api = apiHost(clusterName, baseDomain);
  if (api.length > 253) {
    f.error('spec.baseDomain', `the API host name '${api.slice(0, 40)}…' would be ${api.length} characters${note}; DNS names are limited to 253`);
    return f;
  }
  const console = consoleHost(clusterName, baseDomain);
  if (console.length > 253) {
    f.error('spec.baseDomain', `the console host name 'console-openshift-console.apps.…' would be ${console.length} characters${note}; DNS names are limited to 253`);
  }
  return f;
}
