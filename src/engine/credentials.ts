// The agent's API credential, made to outlive months in storage (DESIGN.md section 2). The node-kubeconfig's
// client certificate, node-system-admin-client, is valid 120 days on 4.12-4.15 and refreshed after 30
// (cluster-kube-apiserver-operator pkg/operator/certrotationcontroller/certrotationcontroller.go): after about
// 90 days powered off every call is 401, and the operator that would refresh it is a pod, which needs kubelet,
// which needs the agent to approve its CSRs. On a 401 the agent therefore switches to the
// localhost-recovery-client service-account token of the newest kube-apiserver revision on the node: the
// credential the kube-apiserver static pod's own cert-regeneration controller uses
// (bindata/assets/kube-apiserver/kubeconfig-cm.yaml, tokenFile), a token that does not expire. Same server and
// trust (localhost-recovery verifies against the 10-year localhost-recovery serving certificate).
import { clientCertificateNotAfter } from '../certs/pem';
import { createClusterClient, type ClosableClusterClient } from '../cluster/client';
import { withCredentialFallback, type Fallback } from '../cluster/credential-fallback';
import { loadKubeconfig, type Kubeconfig } from '../cluster/kubeconfig';
import { findRecoveryToken } from '../cluster/recovery-token';
import type { Host } from '../host/host';
import type { Logger } from '../log';
import { STATIC_POD_RESOURCES_DIR } from '../paths';

async function recoveryTokenClient(host: Host, primary: Kubeconfig, log: Logger): Promise<Fallback | undefined> {
  const tokenFile = await findRecoveryToken(host);
  if (!tokenFile) {
    log.warn(`no localhost-recovery-client token under ${STATIC_POD_RESOURCES_DIR}: the agent has no other credential`);
    return undefined;
  }
  const token = (await host.readText(tokenFile)).trim();
  const kc: Kubeconfig = { ...primary, clientCert: undefined, clientKey: undefined, token, tokenFile, readFile: (p) => host.readFile(p) };
  return { client: createClusterClient(kc, { log }), description: `the localhost-recovery-client token (${tokenFile})` };
}

/** The agent's client: the node-local kubeconfig, and the recovery token once the API refuses it. */
export async function createAgentClient(host: Host, kubeconfig: string, log: Logger): Promise<ClosableClusterClient> {
  const kc = await loadKubeconfig((p) => host.readFile(p), kubeconfig);
  const credential = kc.clientCert ? `the client certificate of ${kubeconfig}` : `the credential of ${kubeconfig}`;
  return withCredentialFallback(
    createClusterClient(kc, { log }),
    credential,
    () => recoveryTokenClient(host, kc, log),
    (f) => log.warn(`the API refused ${credential} (HTTP 401: it has expired); continuing with ${f.description}`),
    clientCertificateNotAfter(kc.clientCert),
  );
}
