// Helpers for tests that act on the simulated cluster from outside, like the agent would: over HTTPS with
// a kubeconfig identity, and TLS handshakes against the endpoints to see which certificate is served.
import { X509Certificate } from 'node:crypto';
import { after, before } from 'node:test';
import { connect } from 'node:tls';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { resourcePath } from '../../../src/cluster/resources';
import type { KubeObject, ResourceType } from '../../../src/cluster/types';
import { kubeCall, kubeRequest, type Credentials } from './kube-http';
import { startSimulator, type Simulator, type SimulatorOptions } from '../index';

/** The domain the cluster tests move the simulated cluster to. */
export const NEW_DOMAIN = 'store42.example.com';

/**
 * Rollouts long enough (30 simulated minutes = 1.8 s at time scale 0.001) that a test reading the
 * intermediate state over HTTPS still sees it on a loaded machine; tests that only await completion keep them
 * anyway.
 */
export const OBSERVABLE_ROLLOUTS = {
  kubeApiserverRollout: 30 * 60_000,
  openshiftApiserverRollout: 30 * 60_000,
  authenticationRollout: 30 * 60_000,
  consoleRollout: 30 * 60_000,
  ingressRollout: 30 * 60_000,
  machineConfigRollout: 30 * 60_000,
};

/** A kubernetes.io/tls Secret holding `pair`, as an admin would create it. */
export function tlsSecret(namespace: string, name: string, pair: { certPem: string; keyPem: string }): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': Buffer.from(pair.certPem).toString('base64'), 'tls.key': Buffer.from(pair.keyPem).toString('base64') },
  };
}

/** A running simulator (time scale 0.001, kubelet running, observable rollouts) for `fn`, stopped after. */
export async function withSimulator(opts: SimulatorOptions, fn: (sim: Simulator, admin: TestClient) => Promise<void>): Promise<void> {
  const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running', ...opts, durations: { ...OBSERVABLE_ROLLOUTS, ...opts.durations } });
  try {
    await fn(sim, TestClient.fromKubeconfig(sim.kubeconfigs.localhost));
  } finally {
    await sim.stop();
  }
}

/** Credentials from a kubeconfig file written by the simulator (client certificate users). */
/** A simulator with kubelet running and an admin client of it, for the enclosing suite (started before, stopped after). */
export function runningSimulatorPerSuite(use: (sim: Simulator, admin: TestClient) => void): void {
  let sim: Simulator | undefined;
  before(async () => {
    sim = await startSimulator({ timeScale: 0.001, kubelet: 'running' });
    use(sim, TestClient.fromKubeconfig(sim.kubeconfigs.localhost));
  });
  after(async () => {
    await sim?.stop();
  });
}

export function credentialsFromKubeconfig(path: string): Credentials {
  const doc = parse(readFileSync(path, 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string; 'tls-server-name'?: string } }[];
    users: { user: { 'client-certificate-data'?: string; 'client-key-data'?: string } }[];
  };
  const cluster = doc.clusters[0]!.cluster;
  const user = doc.users[0]!.user;
  const d = (s?: string) => (s ? Buffer.from(s, 'base64').toString('utf8') : undefined);
  return {
    server: cluster.server,
    caPem: d(cluster['certificate-authority-data'])!,
    certPem: d(user['client-certificate-data']),
    keyPem: d(user['client-key-data']),
    tlsServerName: cluster['tls-server-name'],
  };
}

export class TestClient {
  constructor(readonly creds: Credentials) {}

  static fromKubeconfig(path: string): TestClient {
    return new TestClient(credentialsFromKubeconfig(path));
  }

  get<T extends KubeObject = KubeObject>(type: ResourceType, name: string, namespace?: string): Promise<T> {
    return kubeCall<T>(this.creds, 'GET', resourcePath(type, namespace, name));
  }

  async list<T extends KubeObject = KubeObject>(type: ResourceType, namespace?: string): Promise<T[]> {
    return (await kubeCall<{ items: T[] }>(this.creds, 'GET', resourcePath(type, namespace))).items;
  }

  create<T extends KubeObject = KubeObject>(type: ResourceType, obj: KubeObject): Promise<T> {
    return kubeCall<T>(this.creds, 'POST', resourcePath(type, obj.metadata?.namespace), obj);
  }

  update<T extends KubeObject = KubeObject>(type: ResourceType, obj: KubeObject): Promise<T> {
    return kubeCall<T>(this.creds, 'PUT', resourcePath(type, obj.metadata?.namespace, obj.metadata?.name), obj);
  }

  mergePatch<T extends KubeObject = KubeObject>(type: ResourceType, name: string, patch: unknown, namespace?: string): Promise<T> {
    return kubeCall<T>(this.creds, 'PATCH', resourcePath(type, namespace, name), patch, { contentType: 'application/merge-patch+json' });
  }

  delete(type: ResourceType, name: string, namespace?: string): Promise<unknown> {
    return kubeCall(this.creds, 'DELETE', resourcePath(type, namespace, name));
  }

  /** Approves a CSR through the /approval subresource, as `oc adm certificate approve` does. */
  async approveCsr(name: string, reason = 'TestApprove'): Promise<KubeObject> {
    const path = `/apis/certificates.k8s.io/v1/certificatesigningrequests/${encodeURIComponent(name)}`;
    const csr = await kubeCall<KubeObject>(this.creds, 'GET', path);
    const status = (csr.status ?? {}) as { conditions?: unknown[] };
    csr.status = {
      ...status,
      conditions: [...(status.conditions ?? []), { type: 'Approved', status: 'True', reason, message: 'approved by a test', lastUpdateTime: new Date().toISOString() }],
    };
    return kubeCall<KubeObject>(this.creds, 'PUT', `${path}/approval`, csr);
  }

  async readyz(): Promise<boolean> {
    const ans = await kubeRequest(this.creds, 'GET', '/readyz', undefined, { timeoutMs: 2000 }).catch(() => undefined);
    return ans?.status === 200;
  }
}

/** The certificate a TLS endpoint presents for `servername` (SNI), and whether it verified against `caPem`. */
export function servedCertificate(host: string, port: number, servername: string | undefined, caPem?: string): Promise<{ cert: X509Certificate; authorized: boolean; error?: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, servername, ca: caPem, rejectUnauthorized: false }, () => {
      const peer = socket.getPeerX509Certificate();
      const result = { cert: peer!, authorized: socket.authorized, error: socket.authorizationError ? String(socket.authorizationError) : undefined };
      socket.end();
      resolve(result);
    });
    socket.on('error', reject);
  });
}

/** The subject alternative DNS names of a certificate. */
export function dnsNames(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? '')
    .split(', ')
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4));
}

/** Condition status of a ClusterOperator-like object. */
export function conditionStatus(obj: KubeObject | undefined, type: string): string | undefined {
  return ((obj?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === type)?.status;
}

export function condition(obj: KubeObject | undefined, type: string): { type: string; status: string; reason?: string; message?: string } | undefined {
  return ((obj?.status as { conditions?: { type: string; status: string; reason?: string; message?: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === type);
}
