// The default IngressController (openshift-ingress-operator/default) serves every route without its own
// certificate; spec.defaultCertificate names a kubernetes.io/tls secret in openshift-ingress (CRD
// 0000_50_ingress_00_ingresscontrollers: "a reference to a secret containing the default certificate";
// openshift-docs "Setting a custom default certificate": the secret lives in openshift-ingress). Without it,
// routes on the new apps domain would be served the old wildcard certificate.
import { R } from '../../cluster/resources';
import type { ClusterClient, KubeObject } from '../../cluster/types';
import { DEFAULT_INGRESS_CONTROLLER, INGRESS_OPERATOR_NAMESPACE, SECRETS } from './names';
import { updateObject } from '../../cluster/objects';

export interface IngressController extends KubeObject {
  spec?: { defaultCertificate?: { name?: string }; domain?: string; [k: string]: unknown };
}

export async function readDefaultCertificate(client: ClusterClient): Promise<string | undefined> {
  const ic = await client.get<IngressController>(R.ingressControllers, DEFAULT_INGRESS_CONTROLLER, INGRESS_OPERATOR_NAMESPACE);
  return ic?.spec?.defaultCertificate?.name || undefined;
}

/**
 * `secretName` = the certificate to serve; undefined = give back the operator-generated one, but only when
 * the current one is ours (someone else's custom certificate is left alone in native mode).
 */
export function defaultCertificateTarget(current: string | undefined, secretName: string | undefined): string | undefined {
  if (secretName) return secretName;
  return current === SECRETS.ingress ? undefined : current;
}

export async function ensureDefaultCertificate(client: ClusterClient, secretName: string | undefined): Promise<{ changed: boolean; previous?: string }> {
  let previous: string | undefined;
  const result = await updateObject<IngressController>(client, R.ingressControllers, DEFAULT_INGRESS_CONTROLLER, INGRESS_OPERATOR_NAMESPACE, (current) => {
    previous = current.spec?.defaultCertificate?.name || undefined;
    const target = defaultCertificateTarget(previous, secretName);
    if (target === previous) return undefined;
    const spec = { ...current.spec };
    if (target) spec.defaultCertificate = { name: target };
    else delete spec.defaultCertificate;
    return { ...current, spec };
  });
  return { changed: result.changed, ...(previous ? { previous } : {}) };
}
