// The kubeconfig files a relocatable SNO carries, pointing at the simulator:
// - localhost: the node-local admin kubeconfig the agent uses (DEFAULT_KUBECONFIG in src/paths.ts:
//   node-kubeconfigs/localhost.kubeconfig, which talks to the kube-apiserver directly and so works whatever
//   the domain);
// - admin: the installer's auth/kubeconfig: server https://api.<cluster>.<domain>:6443 and a CA bundle
//   holding the load-balancer serving signer (reference/anchor-ztpfw-domain.md §2: only `server:` changes
//   after a domain change). Here the name cannot resolve, so it points at the api endpoint's address with
//   tls-server-name set to the API name: TLS still verifies the name the cluster serves;
// - bootstrap: the kubelet's bootstrap kubeconfig (node-bootstrapper identity).
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { stringify } from 'yaml';
import type { KeyAndCert } from '../pki';

export interface KubeconfigSpec {
  server: string;
  caPem: string;
  client: KeyAndCert;
  tlsServerName?: string;
  clusterName: string;
  userName: string;
}

export function kubeconfigText(k: KubeconfigSpec): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: k.clusterName,
        cluster: { server: k.server, 'certificate-authority-data': b64(k.caPem), ...(k.tlsServerName ? { 'tls-server-name': k.tlsServerName } : {}) },
      },
    ],
    users: [{ name: k.userName, user: { 'client-certificate-data': b64(k.client.certPem), 'client-key-data': b64(k.client.keyPem) } }],
    contexts: [{ name: k.userName, context: { cluster: k.clusterName, user: k.userName } }],
    'current-context': k.userName,
    preferences: {},
  });
}

/** Writes a kubeconfig atomically with mode 0600 (it holds a private key). */
export function writeKubeconfigFile(path: string, k: KubeconfigSpec): string {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, kubeconfigText(k), { mode: 0o600 });
  renameSync(tmp, path);
  return path;
}
