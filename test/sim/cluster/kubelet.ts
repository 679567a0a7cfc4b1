// The simulated kubelet. Started by the host stand-ins when the agent runs `systemctl start kubelet`, it
// behaves like kubelet's TLS bootstrap and certificate managers (client-go util/certificate): wait for the
// API, file a client CSR with the bootstrap identity, wait for it to be approved and signed, then — as
// system:node:<name>, over HTTPS — register the Node and report it Ready, file the serving CSR and serve
// with the issued certificate. An unsigned request is abandoned after csrRefile (certificateWaitTimeout)
// and a new one filed. Certificates are kept on disk like /var/lib/kubelet/pki/*-current.pem, so after a
// reboot the kubelet reuses them.
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { R, resourcePath } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import type { SimContext } from './context';
import { buildCsr } from './csr-builder';
import { SIGNER_CLIENT_KUBELET, SIGNER_KUBELET_SERVING } from './csr-signer';
import { kubeCall, kubeRequest, kubeWatch, KubeHttpError, type Credentials } from './kube-http';
import { clusterNames, minorVersion } from './options';
import { pemBlocks } from './x509';

export const BOOTSTRAP_USER = 'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper';
export const BOOTSTRAP_GROUPS = ['system:serviceaccounts:openshift-machine-config-operator', 'system:serviceaccounts', 'system:authenticated'];

export type KubeletPhase = 'stopped' | 'waiting-for-api' | 'bootstrapping-client' | 'registering' | 'ready' | 'requesting-serving' | 'serving' | 'idle-no-csr';

export interface KubeletDeps {
  ctx: SimContext;
  /** The API URL and CA the kubelet's kubeconfig points at. */
  apiUrl: string;
  apiCaPem: string;
  /** The bootstrap kubeconfig's client certificate (node-bootstrapper identity). */
  bootstrap: { certPem: string; keyPem: string };
  /** /var/lib/kubelet/pki of the simulated node. */
  pkiDir: string;
}

export interface KubeletCsrRecord {
  name: string;
  kind: 'client' | 'serving';
  filedAt: number;
}

const CLIENT_FILE = 'kubelet-client-current.pem';
const SERVING_FILE = 'kubelet-server-current.pem';

export class SimKubelet {
  phase: KubeletPhase = 'stopped';
  /** Every CSR this kubelet filed, in order. */
  readonly filed: KubeletCsrRecord[] = [];
  private abort: AbortController | undefined;
  private server: Server | undefined;
  private servingPort: number | undefined;

  constructor(private readonly deps: KubeletDeps) {}

  get running(): boolean {
    return !!this.abort;
  }

  /** The kubelet's HTTPS endpoint once it serves with its issued serving certificate. */
  get endpoint(): { host: string; port: number } | undefined {
    return this.servingPort ? { host: '127.0.0.1', port: this.servingPort } : undefined;
  }

  start(): void {
    if (this.abort) return;
    this.abort = new AbortController();
    const signal = this.abort.signal;
    this.run(signal).catch((e) => {
      if (!signal.aborted) this.deps.ctx.log(`kubelet: stopped on an unexpected error: ${(e as Error).message}`);
    });
  }

  /** The kubelet process stops (systemctl stop, node reboot, simulator stop). */
  stop(): void {
    this.abort?.abort(new Error('kubelet stopped'));
    this.abort = undefined;
    this.server?.close();
    this.server?.closeAllConnections();
    this.server = undefined;
    this.servingPort = undefined;
    this.setPhase('stopped');
  }

  private setPhase(p: KubeletPhase): void {
    if (this.phase === p) return;
    this.phase = p;
    this.deps.ctx.events.emit('kubelet', { phase: p });
    this.deps.ctx.log(`kubelet: ${p}`);
  }

  private get opts() {
    return this.deps.ctx.opts;
  }

  /** A real-time floor for polling so a long outage does not spin (20 ms). */
  private pause(simMs: number, signal: AbortSignal): Promise<void> {
    return this.deps.ctx.clock.sleep(Math.max(simMs, 20 / this.deps.ctx.clock.scale), signal);
  }

  private async run(signal: AbortSignal): Promise<void> {
    for (;;) {
      try {
        await this.waitForApi(signal);
        const client = await this.clientCredentials(signal);
        await this.registerAndReport(client, signal);
        await this.servingCertificate(client, signal);
        await this.heartbeat(client, signal);
      } catch (e) {
        if (signal.aborted) return;
        this.deps.ctx.log(`kubelet: ${(e as Error).message}; retrying`);
        await this.pause(10_000, signal).catch(() => undefined);
        if (signal.aborted) return;
      }
    }
  }

  private async waitForApi(signal: AbortSignal): Promise<void> {
    this.setPhase('waiting-for-api');
    const creds = this.bootstrapCredentials();
    // kubelet dials api-int.<cluster>.<installed domain> (cluster/names.ts): without an answer for that name
    // it never reaches the API, files nothing and never reports its Node.
    const apiInt = clusterNames(this.opts).apiInt;
    let said = false;
    while (!this.deps.ctx.names.resolves(apiInt)) {
      if (!said) this.deps.ctx.log(`kubelet: dial tcp: lookup ${apiInt}: no such host`);
      said = true;
      await this.pause(10_000, signal);
    }
    for (;;) {
      const ans = await kubeRequest(creds, 'GET', '/readyz', undefined, { timeoutMs: 2000, signal }).catch(() => undefined);
      if (ans?.status === 200) return;
      await this.pause(2_000, signal);
    }
  }

  private bootstrapCredentials(): Credentials {
    return { server: this.deps.apiUrl, caPem: this.deps.apiCaPem, certPem: this.deps.bootstrap.certPem, keyPem: this.deps.bootstrap.keyPem };
  }

  private credentialsFromFile(file: string): Credentials {
    const pem = readFileSync(file, 'utf8');
    const certPem = pemBlocks(pem, 'CERTIFICATE').join('');
    const keyPem = pemBlocks(pem, 'EC PRIVATE KEY')[0] ?? pemBlocks(pem, 'PRIVATE KEY')[0] ?? '';
    return { server: this.deps.apiUrl, caPem: this.deps.apiCaPem, certPem, keyPem };
  }

  /** A usable certificate in the file: present, not expired, and (for serving) covering the addresses. */
  private usable(file: string, wanted?: { dnsNames: string[]; ips: string[] }): boolean {
    if (!existsSync(file)) return false;
    try {
      const leaf = new X509Certificate(pemBlocks(readFileSync(file, 'utf8'))[0] ?? '');
      if (Date.parse(leaf.validTo) <= Date.now()) return false;
      if (leaf.subject.split('\n').find((l) => l.startsWith('CN='))?.slice(3) !== `system:node:${this.opts.nodeName}`) return false;
      if (wanted) {
        // The certificate manager rotates when the certificate misses a requested name (certSatisfiesTemplate).
        if (!wanted.dnsNames.every((d) => leaf.checkHost(d, { subject: 'never' }) !== undefined)) return false;
        if (!wanted.ips.every((ip) => leaf.checkIP(ip) !== undefined)) return false;
      }
      return true;
    } catch {
      return false;
    }
  }

  private writePem(file: string, certPem: string, keyPem: string): void {
    mkdirSync(this.deps.pkiDir, { recursive: true });
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, `${certPem.trim()}\n${keyPem.trim()}\n`, { mode: 0o600 });
    renameSync(tmp, file);
  }

  private async clientCredentials(signal: AbortSignal): Promise<Credentials> {
    const file = join(this.deps.pkiDir, CLIENT_FILE);
    if (this.usable(file)) return this.credentialsFromFile(file);
    this.setPhase('bootstrapping-client');
    const { certPem, keyPem } = await this.requestCertificate('client', this.bootstrapCredentials(), signal);
    this.writePem(file, certPem, keyPem);
    return this.credentialsFromFile(file);
  }

  private servingTemplate(): { dnsNames: string[]; ips: string[] } {
    return { dnsNames: [this.opts.nodeName], ips: [...this.opts.kubeletIPs] };
  }

  private async servingCertificate(client: Credentials, signal: AbortSignal): Promise<void> {
    const file = join(this.deps.pkiDir, SERVING_FILE);
    if (!this.usable(file, this.servingTemplate())) {
      this.setPhase('requesting-serving');
      const { certPem, keyPem } = await this.requestCertificate('serving', client, signal);
      this.writePem(file, certPem, keyPem);
    }
    await this.serve(file);
    this.setPhase('serving');
  }

  /** Listens with the issued serving certificate, as kubelet's :10250 does. */
  private async serve(file: string): Promise<void> {
    const pem = readFileSync(file, 'utf8');
    const cert = pemBlocks(pem, 'CERTIFICATE').join('');
    const key = pemBlocks(pem, 'EC PRIVATE KEY')[0] ?? '';
    if (this.server) {
      this.server.setSecureContext({ cert, key });
      return;
    }
    const server = createServer({ cert, key }, (req, res) => {
      res.writeHead(req.url === '/healthz' ? 200 : 401, { 'Content-Type': 'text/plain' });
      res.end(req.url === '/healthz' ? 'ok' : 'Unauthorized');
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.servingPort = (server.address() as AddressInfo).port;
  }

  /**
   * Files a CSR and waits for its certificate. A request that is not signed within csrRefile (or is
   * denied or fails) is abandoned and a new key and request are made, as the certificate manager does.
   */
  private async requestCertificate(kind: 'client' | 'serving', creds: Credentials, signal: AbortSignal): Promise<{ certPem: string; keyPem: string }> {
    for (;;) {
      while (this.deps.ctx.file.state.faults.kubeletFilesNoCsrs) {
        this.setPhase('idle-no-csr');
        await this.pause(5_000, signal);
      }
      this.setPhase(kind === 'client' ? 'bootstrapping-client' : 'requesting-serving');
      const subject =
        kind === 'client'
          ? { commonName: `system:node:${this.opts.nodeName}`, organizations: ['system:nodes'] }
          : { commonName: `system:node:${this.opts.nodeName}`, organizations: ['system:nodes'], dnsNames: [this.opts.nodeName], ipAddresses: [...this.opts.kubeletIPs] };
      const { csrPem, keyPem } = await buildCsr(subject);
      // ECDSA keys: no key encipherment (client-go DefaultKubeletClientGetUsages / DefaultKubeletServingGetUsages).
      const usages = kind === 'client' ? ['digital signature', 'client auth'] : ['digital signature', 'server auth'];
      const created = await kubeCall<KubeObject>(creds, 'POST', resourcePath(R.csrs), {
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { generateName: 'csr-' },
        spec: { request: Buffer.from(csrPem).toString('base64'), signerName: kind === 'client' ? SIGNER_CLIENT_KUBELET : SIGNER_KUBELET_SERVING, usages },
      });
      const name = created.metadata!.name!;
      this.filed.push({ name, kind, filedAt: this.deps.ctx.clock.now() });
      this.deps.ctx.events.emit('kubelet', { phase: 'csr-filed', kind, name });
      this.deps.ctx.log(`kubelet: filed ${kind} CSR ${name}`);
      const cert = await this.waitForCertificate(creds, name, signal);
      if (cert) return { certPem: cert, keyPem };
      this.deps.ctx.log(`kubelet: ${kind} CSR ${name} was not issued in time; filing a new one`);
    }
  }

  /** The issued PEM, or undefined when the request timed out, was denied or failed. */
  private async waitForCertificate(creds: Credentials, name: string, outer: AbortSignal): Promise<string | undefined> {
    const deadline = this.deps.ctx.clock.now() + this.opts.durations.csrRefile;
    const path = resourcePath(R.csrs, undefined, name);
    for (;;) {
      const remaining = deadline - this.deps.ctx.clock.now();
      if (remaining <= 0) return undefined;
      let csr: KubeObject;
      try {
        csr = await kubeCall<KubeObject>(creds, 'GET', path, undefined, { signal: outer });
      } catch (e) {
        if (outer.aborted) throw e;
        if (e instanceof KubeHttpError && e.status === 404) return undefined;
        await this.pause(2_000, outer);
        continue;
      }
      const outcome = csrOutcome(csr);
      if (outcome !== 'pending') return outcome === 'failed' ? undefined : outcome.cert;
      const timer = new AbortController();
      const cancelTimer = this.deps.ctx.clock.after(remaining, () => timer.abort(new Error('csr wait timed out')));
      const onOuter = () => timer.abort(outer.reason);
      outer.addEventListener('abort', onOuter, { once: true });
      let issued: string | undefined;
      let failed = false;
      try {
        const rv = csr.metadata?.resourceVersion;
        await kubeWatch(
          creds,
          `${resourcePath(R.csrs)}?fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}${rv ? `&resourceVersion=${rv}` : ''}`,
          (ev) => {
            if (ev.type === 'DELETED') {
              failed = true;
              return true;
            }
            if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') return false;
            const o = csrOutcome(ev.object as KubeObject);
            if (o === 'pending') return false;
            if (o === 'failed') failed = true;
            else issued = o.cert;
            return true;
          },
          timer.signal,
        );
      } catch (e) {
        if (outer.aborted) throw e;
        // watch dropped (API restart, timeout): loop and re-read
      } finally {
        cancelTimer();
        outer.removeEventListener('abort', onOuter);
      }
      if (issued) return issued;
      if (failed) return undefined;
      if (timer.signal.aborted && !outer.aborted) return undefined;
      await this.pause(1_000, outer);
    }
  }

  private nodeStatus(existing: Record<string, unknown> | undefined): Record<string, unknown> {
    const now = this.deps.ctx.clock.iso();
    const prevConds = ((existing?.conditions ?? []) as { type: string; status: string; lastTransitionTime?: string }[]);
    const cond = (type: string, status: string, reason: string, message: string) => {
      const prev = prevConds.find((c) => c.type === type);
      return { type, status, reason, message, lastHeartbeatTime: now, lastTransitionTime: prev && prev.status === status ? prev.lastTransitionTime : now };
    };
    const kubeMinor = minorVersion(this.opts.version) + 13;
    return {
      ...(existing ?? {}),
      addresses: [...this.opts.kubeletIPs.map((address) => ({ type: 'InternalIP', address })), { type: 'Hostname', address: this.opts.nodeName }],
      conditions: [
        cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        ...(((existing?.nodeInfo ?? {}) as Record<string, unknown>)),
        kubeletVersion: `v1.${kubeMinor}.0+sim`,
        kubeProxyVersion: `v1.${kubeMinor}.0+sim`,
        containerRuntimeVersion: `cri-o://1.${kubeMinor}.0`,
        operatingSystem: 'linux',
        architecture: 'amd64',
        osImage: `Red Hat Enterprise Linux CoreOS ${this.opts.version.split('.').slice(0, 2).join('')}.92.202401010000-0 (Plow)`,
      },
    };
  }

  /** PUT .../nodes/<name>/status, re-reading on 409 as kubelet's status manager does. */
  private async postStatus(client: Credentials, signal: AbortSignal): Promise<void> {
    const path = resourcePath(R.nodes, undefined, this.opts.nodeName);
    for (let attempt = 0; ; attempt++) {
      const node = await kubeCall<KubeObject>(client, 'GET', path, undefined, { signal });
      node.status = this.nodeStatus(node.status as Record<string, unknown> | undefined);
      try {
        await kubeCall(client, 'PUT', `${path}/status`, node, { signal });
        return;
      } catch (e) {
        if (!(e instanceof KubeHttpError) || e.status !== 409 || attempt >= 5) throw e;
      }
    }
  }

  private async registerAndReport(client: Credentials, signal: AbortSignal): Promise<void> {
    this.setPhase('registering');
    const path = resourcePath(R.nodes, undefined, this.opts.nodeName);
    const got = await kubeRequest(client, 'GET', path, undefined, { signal });
    if (got.status === 404) {
      await kubeCall(client, 'POST', resourcePath(R.nodes), {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: this.opts.nodeName, labels: nodeLabels(this.opts.nodeName) },
        spec: {},
      }, { signal });
    } else if (got.status !== 200) {
      throw new KubeHttpError(got.status, `GET ${path}: ${got.status}`);
    }
    await this.pause(this.opts.durations.nodeReady, signal);
    await this.postStatus(client, signal);
    this.setPhase('ready');
  }

  private async heartbeat(client: Credentials, signal: AbortSignal): Promise<void> {
    for (;;) {
      await this.pause(this.opts.durations.nodeStatusReport, signal);
      await this.postStatus(client, signal);
    }
  }
}

/** 'pending', 'failed' (Denied/Failed), or the issued certificate PEM. */
export function csrOutcome(csr: KubeObject): 'pending' | 'failed' | { cert: string } {
  const status = (csr.status ?? {}) as { certificate?: string; conditions?: { type: string; status: string }[] };
  if (status.certificate) return { cert: Buffer.from(status.certificate, 'base64').toString('utf8') };
  if ((status.conditions ?? []).some((c) => (c.type === 'Denied' || c.type === 'Failed') && c.status === 'True')) return 'failed';
  return 'pending';
}

export function nodeLabels(nodeName: string): Record<string, string> {
  return {
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': nodeName,
    'kubernetes.io/os': 'linux',
    'node-role.kubernetes.io/control-plane': '',
    'node-role.kubernetes.io/master': '',
    'node-role.kubernetes.io/worker': '',
    'node.openshift.io/os_id': 'rhcos',
  };
}
