// The cluster simulator (issue #3): a single-node OpenShift that behaves like one, for the integration
// tests, the systemd end-to-end test and `npm run demo`. The API server (./apiserver) speaks the real
// Kubernetes wire protocol; ./cluster brings the cluster to life — seed state, kubelet, CSR signer,
// operators with timed rollouts, the router, TLS endpoints, faults — on one simulated clock.
//
//   const sim = await startSimulator({ timeScale: 0.001 });
//   // the agent runs `systemctl start kubelet` → a stand-in calls sim.startKubelet() (or POSTs to the control URL)
//   await sim.waitFor(() => sim.apiUp(), 5000, 'API up');
//   ...
//   await sim.stop();
import { stablePort } from './ports';
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { R } from '../../src/cluster/resources';
import { startApiServer, createStore, type ApiServer, type SimObjectStore } from './apiserver';
import { createCa, issueClientCert, sharedCa, signCsr, type CertificateAuthority } from './pki';
import type { ApiFaults, StoreEvent } from './store-types';
import { ApiAvailability } from './cluster/availability';
import { SimClock } from './cluster/clock';
import type { SimContext } from './cluster/context';
import { startControlServer, type FaultRequest } from './cluster/control';
import { buildCsr } from './cluster/csr-builder';
import { CsrSigner } from './cluster/csr-signer';
import { Endpoints, type Endpoint } from './cluster/endpoints';
import { HOSTILE_CSR_KINDS, injectHostileCsr, type HostileCsrKind, type InjectedCsr } from './cluster/hostile';
import { writeKubeconfigFile } from './cluster/kubeconfigs';
import { BOOTSTRAP_USER, SimKubelet, type KubeletCsrRecord, type KubeletPhase } from './cluster/kubelet';
import { NodeLifecycle } from './cluster/node-lifecycle';
import type { OperatorView } from './cluster/operators/base';
import { AuthenticationOperator } from './cluster/operators/authentication';
import { ConsoleOperator } from './cluster/operators/console';
import { IngressOperator } from './cluster/operators/ingress';
import { KubeApiserverOperator } from './cluster/operators/kube-apiserver';
import { MachineConfigOperator } from './cluster/operators/machine-config';
import { OpenshiftApiserverOperator } from './cluster/operators/openshift-apiserver';
import { asExpected, writeClusterOperatorConditions } from './cluster/operators/status';
import { bootstrapGroupsFor, clusterNames, nodeAdminClientValidity, nodeAdminSignerValidity, resolveOptions, type ResolvedOptions, type SimulatorOptions } from './cluster/options';
import { NodeNames, type InstalledName } from './cluster/names';
import { Rollouts } from './cluster/rollouts';
import { Router } from './cluster/router';
import { NetworkProxyController } from './cluster/operators/network-proxy';
import { CrdEstablisher } from './cluster/crds';
import { CLUSTER_OPERATORS, INSTALLED_AGO_MS, seedCluster, signersFromStore, type ClusterSigners } from './cluster/seed';
import { newState, StateFile, type ClusterIdentity } from './cluster/state';

export type { SimulatorOptions, ResolvedOptions, SimDurations, KubeletInitialState } from './cluster/options';
export type { HostileCsrKind, InjectedCsr } from './cluster/hostile';
export { HOSTILE_CSR_KINDS } from './cluster/hostile';
export type { FaultRequest } from './cluster/control';

export interface SimulatorSnapshot {
  simTime: string;
  apiUp: boolean;
  apiDownReasons: string[];
  kubelet: { enabled: boolean; running: boolean; phase: KubeletPhase; csrs: KubeletCsrRecord[] };
  rollouts: { operator: string; startedAt: string; endsAt: string; remainingSimMs: number }[];
  clusterOperators: Record<string, { Available?: string; Progressing?: string; Degraded?: string }>;
  machineConfigPool: { rendered?: string; updating: boolean };
  faults: { kubeletFilesNoCsrs: boolean; apiNeverUp: boolean };
}

export interface Simulator {
  /** The kube-apiserver URL (https://127.0.0.1:port); also the "api" endpoint. */
  readonly apiUrl: string;
  /** The CA the API server's own certificate and the client certificates chain to. */
  readonly caPem: string;
  /** PEM file of caPem. */
  readonly caFile: string;
  /** Where kubeconfigs, the CA file and control-url are. */
  readonly dir: string;
  /**
   * localhost and localhostRecovery: the node-kubeconfigs (node-system-admin-client certificate, see
   * nodeAdminClientValidity); admin: the installer's auth/kubeconfig (10 years); bootstrap: kubelet's.
   */
  readonly kubeconfigs: { admin: string; localhost: string; localhostRecovery: string; bootstrap: string };
  /**
   * The node's /etc/kubernetes/static-pod-resources as far as the simulator models it: the
   * localhost-recovery-client token of the current and of an older kube-apiserver revision.
   */
  readonly staticPodResourcesDir: string;
  /** Control channel for out-of-process stand-ins (also written to <dir>/control-url). */
  readonly controlUrl: string;
  readonly store: SimObjectStore;
  /** The API server: faults, request log (api.requests / api.clearRequests()), setUp, compactHistory. */
  readonly api: ApiServer;
  readonly endpoints: { api: Endpoint; ingress: Endpoint };
  /** Simulated time (implements the agent's Clock): now() in simulated ms, sleep(simulated ms). */
  readonly clock: SimClock;
  /** 'log', 'rollout', 'reboot', 'kubelet', 'api' events (see cluster/context.ts). */
  readonly events: EventEmitter;
  readonly options: ResolvedOptions & { stateDir?: string; dir: string };
  /** The cluster's signers (certificates and keys), e.g. to verify what the endpoints serve. */
  readonly signers: ClusterSigners & { apiCa: CertificateAuthority };
  readonly kubeletStarted: boolean;
  /** The simulated kubelet: phase, the CSRs it filed, its HTTPS endpoint once serving. */
  readonly kubelet: SimKubelet;
  /** The node's /var/lib/kubelet/pki: kubelet-client-current.pem and kubelet-server-current.pem (cert + key). */
  readonly kubeletPkiDir: string;
  /** `systemctl start kubelet`: after apiStartup the API answers; the kubelet then bootstraps. */
  startKubelet(): void;
  /** `systemctl stop kubelet`: the node stops reporting (Unknown after the grace period); the API stays. */
  stopKubelet(): void;
  /** Whether the node resolves its installed names from now on (a node-local DNS appears or goes). */
  setNodeResolvesInstalledNames(resolve: boolean | readonly InstalledName[]): void;
  setProxyReachesNode(reaches: boolean): void;
  apiUp(): boolean;
  injectHostileCsr(kind: HostileCsrKind): Promise<InjectedCsr>;
  /** Makes a ClusterOperator report Degraded=True until recoverOperator(). */
  degradeOperator(name: string, reason: string, message?: string): void;
  recoverOperator(name: string): void;
  applyFaults(f: FaultRequest): Promise<{ injected?: InjectedCsr }>;
  /**
   * Resolves when predicate holds (polled every few ms; a throwing predicate counts as "not yet"); rejects
   * after timeoutMs REAL milliseconds, and never before LOADED_MACHINE_WAIT_MS, with the last error and the
   * recent simulator log.
   */
  waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs: number, what?: string): Promise<void>;
  snapshot(): SimulatorSnapshot;
  stop(): Promise<void>;
}

const API_CA_NAME = 'kube-apiserver-sim-ca';
/** The shortest deadline waitFor gives a condition: sized for a loaded machine. */
export const LOADED_MACHINE_WAIT_MS = 5 * 60_000;
/** The router CA's name carries its creation time (cluster-ingress-operator certificate/ca.go). */
const PROCESS_START = Math.floor(Date.now() / 1000);

// RSA key generation dominates a simulator start (test/sim/pki.ts), so CAs are shared per process
// (sharedCa); a persisted cluster keeps its own copy (the API CA in <stateDir>/ca, the signers in its store),
// which is what it reloads after a restart.
function loadOrCreateCa(dir: string | undefined, name: string): CertificateAuthority {
  if (!dir) return sharedCa(name);
  const crt = join(dir, 'ca.crt');
  const key = join(dir, 'ca.key');
  if (existsSync(crt) && existsSync(key)) return { name, certPem: readFileSync(crt, 'utf8'), keyPem: readFileSync(key, 'utf8') };
  const ca = sharedCa(name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(key, ca.keyPem, { mode: 0o600 });
  writeFileSync(crt, ca.certPem);
  return ca;
}

function newSigners(): ClusterSigners {
  return {
    lbSigner: sharedCa('kube-apiserver-lb-signer'),
    routerCa: sharedCa(`cluster-ingress-operator@${PROCESS_START}`),
    csrSigner: sharedCa('kube-csr-signer'),
  };
}

/**
 * A persisted cluster keeps who it is: a restart takes the name, domain, node and version from its state
 * (so `cli.ts --dir DIR` alone restarts it) and refuses options that contradict them.
 */
function withIdentity(input: SimulatorOptions, identity: ClusterIdentity | undefined, stateDir: string | undefined): SimulatorOptions {
  if (!identity) return input;
  const out: SimulatorOptions = { ...input };
  for (const key of ['clusterName', 'baseDomain', 'nodeName', 'nodeIPs', 'version', 'installedVersion'] as const) {
    if (identity[key] === undefined) continue;
    const given = input[key];
    if (given !== undefined && JSON.stringify(given) !== JSON.stringify(identity[key])) {
      throw new Error(`${key}: the cluster persisted in ${stateDir} has ${JSON.stringify(identity[key])}, not ${JSON.stringify(given)} (use another stateDir for another cluster)`);
    }
    (out as Record<string, unknown>)[key] = identity[key];
  }
  return out;
}

export async function startSimulator(input: SimulatorOptions = {}): Promise<Simulator> {
  resolveOptions(input); // reject bad options before touching any directory
  const stateDir = input.stateDir ? resolve(input.stateDir) : undefined;
  if (stateDir) mkdirSync(stateDir, { recursive: true });
  const file = StateFile.open(stateDir && join(stateDir, 'sim-state.json'), () => newState({ realMs: Date.now(), simMs: Date.now() }));
  const restored = file.restored;
  const opts = resolveOptions(withIdentity(input, file.state.identity, stateDir));
  file.state.identity = { clusterName: opts.clusterName, baseDomain: opts.baseDomain, nodeName: opts.nodeName, nodeIPs: opts.nodeIPs, version: opts.version, installedVersion: opts.installedVersion };
  const tempDir = input.dir ? undefined : mkdtempSync(join(tmpdir(), 'sno-sim-'));
  const dir = resolve(input.dir ?? tempDir!);
  mkdirSync(dir, { recursive: true });
  const clock = new SimClock(opts.timeScale, file.state.clock);
  if (!restored) file.state.faults = { ...opts.faults };
  let backdateMs = 0;
  const store = createStore({ clusterVersion: opts.version, persistPath: stateDir && join(stateDir, 'store.json'), now: () => clock.now() - backdateMs });
  const apiCa = loadOrCreateCa(stateDir && join(stateDir, 'ca'), API_CA_NAME);
  const seeded = store.list(R.namespaces).length > 0;
  const signers = (seeded && signersFromStore(store)) || newSigners();
  if (!seeded) {
    if (opts.kubelet === 'running') file.state.kubeletEnabled = true;
    const atInstall = <T>(fn: () => T): T => {
      backdateMs = INSTALLED_AGO_MS;
      try {
        return fn();
      } finally {
        backdateMs = 0;
      }
    };
    seedCluster(store, { opts, signers, clock, apiCa, atInstall });
  }

  // node-system-admin-signer (a key shared across simulators: only its dates matter), trusted beside the API CA as kube-apiserver's
  // client-ca bundle holds node-system-admin-ca (cluster-kube-apiserver-operator targetconfigcontroller.go
  // ManageClientCABundle); the bundle is in openshift-kube-apiserver/client-ca for whoever reads it.
  // Kept where the operator keeps it, so a restarted simulator trusts the kubeconfigs it wrote before.
  const signerRef = { namespace: 'openshift-kube-apiserver-operator', name: 'node-system-admin-signer' };
  const storedSigner = store.get(R.secrets, signerRef.name, signerRef.namespace) as { data?: Record<string, string> } | undefined;
  const nodeAdminSigner = storedSigner?.data
    ? { name: signerRef.name, certPem: Buffer.from(storedSigner.data['tls.crt'] ?? '', 'base64').toString(), keyPem: Buffer.from(storedSigner.data['tls.key'] ?? '', 'base64').toString() }
    : createCa(`openshift-kube-apiserver-operator_node-system-admin-signer@${Math.floor(clock.now() / 1000)}`, { ...nodeAdminSignerValidity(opts, clock.now()), sharedKey: true });
  if (!storedSigner) {
    store.create(R.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: signerRef, type: 'kubernetes.io/tls', data: { 'tls.crt': Buffer.from(nodeAdminSigner.certPem).toString('base64'), 'tls.key': Buffer.from(nodeAdminSigner.keyPem).toString('base64') } });
  }
  const clientCa = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'client-ca', namespace: 'openshift-kube-apiserver' }, data: { 'ca-bundle.crt': `${apiCa.certPem.trim()}\n${nodeAdminSigner.certPem.trim()}\n` } };
  const existingClientCa = store.get(R.configMaps, 'client-ca', 'openshift-kube-apiserver');
  if (existingClientCa) store.update(R.configMaps, { ...existingClientCa, data: clientCa.data });
  else store.create(R.configMaps, clientCa);

  const api = await startApiServer({
    store,
    ca: apiCa,
    clientCas: [nodeAdminSigner.certPem],
    port: file.state.ports.api ?? input.apiPort ?? 0,
    up: false,
    now: () => clock.now(),
    // localhost-recovery: the server name of localhost-recovery.kubeconfig, served by the 10-year
    // localhost-recovery-serving-certkey (cluster-kube-apiserver-operator certrotationcontroller).
    dnsNames: [clusterNames(opts).api, clusterNames(opts).apiInt, 'localhost-recovery'],
    faults: file.state.faults.apiNeverUp ? { neverUp: true } : {},
  });
  await api.reservePort();
  file.state.ports.api = api.port;

  const events = new EventEmitter();
  events.setMaxListeners(50);
  const availability = new ApiAvailability((up) => {
    void api.setUp(up);
    events.emit('api', { up });
  });
  const rollouts = new Rollouts(clock, file);
  const logLines: string[] = [];
  const names = new NodeNames(opts, opts.nodeResolvesInstalledNames, opts.proxyReachesNode);
  const ctx: SimContext = {
    store,
    clock,
    opts,
    names,
    file,
    rollouts,
    availability,
    events,
    log: (message) => {
      const line = `${clock.iso()} ${message}`;
      logLines.push(line);
      if (logLines.length > 2000) logLines.shift();
      events.emit('log', line);
    },
  };

  const pkiDir = join(stateDir ?? dir, 'kubelet', 'pki');
  const bootstrapCert = issueClientCert(apiCa, { user: BOOTSTRAP_USER, groups: bootstrapGroupsFor(opts.installedVersion) });
  const kubelet = new SimKubelet({ ctx, apiUrl: api.url, apiCaPem: apiCa.certPem, bootstrap: bootstrapCert, pkiDir });
  const nodeLifecycle = new NodeLifecycle(ctx);

  const kubeApiserver = new KubeApiserverOperator(ctx);
  const openshiftApiserver = new OpenshiftApiserverOperator(ctx);
  const authentication = new AuthenticationOperator(ctx);
  const consoleOp = new ConsoleOperator(ctx);
  const ingress = new IngressOperator(ctx);
  const late: { endpoints?: Endpoints } = {};
  const machineConfig = new MachineConfigOperator(ctx, {
    halt: () => {
      kubelet.stop();
      nodeLifecycle.kubeletStopped();
      late.endpoints?.dropIngressConnections();
    },
    boot: () => {
      if (!file.state.kubeletEnabled) return;
      nodeLifecycle.kubeletStarted();
      kubelet.start();
    },
  });
  const operators: OperatorView[] = [kubeApiserver, openshiftApiserver, authentication, consoleOp, ingress, machineConfig, new NetworkProxyController(ctx)];
  const crds = new CrdEstablisher(ctx, store.registry);
  const router = new Router(ctx);
  const csrSigner = new CsrSigner(ctx, apiCa, signers.csrSigner);

  store.addAdmission((op, resource, obj, previous) => openshiftApiserver.admit(op, resource, obj, previous));
  const unsubscribe = store.subscribe((e: StoreEvent) => {
    for (const o of operators) o.handle(e);
    router.handle(e);
    crds.handle(e);
    csrSigner.handle(e);
    nodeLifecycle.handle(e);
  });
  for (const o of operators) o.init();
  router.init();
  crds.init();
  csrSigner.init();
  rollouts.resumeAll();

  const endpoints = new Endpoints({ ctx, api, kubeApiserver, authentication, console: consoleOp, ingress, router });
  late.endpoints = endpoints;
  await endpoints.start({ ingress: file.state.ports.ingress ?? (await stablePort()) });
  file.state.ports.ingress = endpoints.ingressEndpoint!.port;

  // --- kubeconfigs and the CA file -----------------------------------------------------------------------
  const clusterNamesOf = clusterNames(opts);
  // node-system-admin-client (CN system:admin, O system:masters), issued with its lifetime on the simulated clock.
  const nodeAdmin = issueClientCert(nodeAdminSigner, { user: 'system:admin', groups: ['system:masters'], ...nodeAdminClientValidity(opts, clock.now()), outliveIssuer: true });
  const admin = issueClientCert(apiCa, { user: 'system:admin', groups: ['system:masters'], validityDays: 3650 });
  const kubeconfigs = {
    localhost: writeKubeconfigFile(join(dir, 'kubeconfigs', 'localhost.kubeconfig'), {
      server: api.url,
      caPem: apiCa.certPem,
      client: nodeAdmin,
      clusterName: 'localhost',
      userName: 'system:admin',
    }),
    localhostRecovery: writeKubeconfigFile(join(dir, 'kubeconfigs', 'localhost-recovery.kubeconfig'), {
      server: api.url,
      tlsServerName: 'localhost-recovery',
      caPem: apiCa.certPem,
      client: nodeAdmin,
      clusterName: 'localhost-recovery',
      userName: 'system:admin',
    }),
    admin: writeKubeconfigFile(join(dir, 'kubeconfigs', 'admin.kubeconfig'), {
      server: `https://${api.host}:${api.port}`,
      tlsServerName: clusterNamesOf.api,
      caPem: `${signers.lbSigner.certPem}${apiCa.certPem}`,
      client: admin,
      clusterName: opts.clusterName,
      userName: 'admin',
    }),
    bootstrap: writeKubeconfigFile(join(dir, 'kubeconfigs', 'bootstrap.kubeconfig'), {
      server: api.url,
      caPem: apiCa.certPem,
      client: bootstrapCert,
      clusterName: 'local',
      userName: 'kubelet-bootstrap',
    }),
  };
  const caFile = join(dir, 'ca.crt');
  writeFileSync(caFile, apiCa.certPem);
  const staticPodResourcesDir = writeRecoveryTokens(dir, api, apiCa);

  // --- the kubelet: where the node is ------------------------------------------------------------------------
  let apiStartupCancel: (() => void) | undefined;
  const bootKubelet = (withStartupDelay: boolean) => {
    file.state.kubeletEnabled = true;
    file.save();
    nodeLifecycle.kubeletStarted();
    if (withStartupDelay && opts.durations.apiStartup > 0 && !apiStartupCancel && !api.isUp) {
      availability.block('api-starting');
      apiStartupCancel = clock.after(opts.durations.apiStartup, () => {
        apiStartupCancel = undefined;
        ctx.log('kube-apiserver: static pod is serving');
        availability.unblock('api-starting');
      });
    }
    availability.unblock('kubelet-not-started');
    kubelet.start();
  };
  if (file.state.kubeletEnabled && !restored && opts.kubelet === 'running') {
    // A running cluster: the API answers now and the kubelet holds certificates approved at the factory.
    await issueRunningKubeletCertificates(pkiDir, opts, apiCa, signers.csrSigner);
    bootKubelet(false);
  } else if (file.state.kubeletEnabled || (!restored && opts.kubelet === 'started')) {
    // kubelet enabled: a (re)booted node starts it; the API answers once the static pods run.
    bootKubelet(true);
  } else {
    availability.block('kubelet-not-started');
  }
  await api.setUp(availability.up());
  availability.onChange((up) => ctx.log(`kube-apiserver: ${up ? 'available' : `unavailable (${availability.downReasons().join(', ')})`}`));

  // --- simulator-level operations --------------------------------------------------------------------------
  const publishOperator = (name: string) => {
    const op = operators.find((o) => o.coName === name);
    if (op) return op.publish();
    const injected = file.state.injectedDegraded[name];
    writeClusterOperatorConditions(ctx, name, {
      Degraded: injected ? { status: 'True', reason: injected.reason, message: injected.message } : asExpected(),
    });
  };

  let stopped = false;
  const sim: Simulator = {
    apiUrl: api.url,
    caPem: apiCa.certPem,
    caFile,
    dir,
    kubeconfigs,
    staticPodResourcesDir,
    controlUrl: '',
    store,
    api,
    endpoints: { api: endpoints.apiEndpoint, ingress: endpoints.ingressEndpoint! },
    clock,
    events,
    options: { ...opts, stateDir, dir },
    signers: { ...signers, apiCa },
    get kubeletStarted() {
      return file.state.kubeletEnabled && kubelet.running;
    },
    kubelet,
    kubeletPkiDir: pkiDir,
    startKubelet() {
      if (file.state.kubeletEnabled && kubelet.running) return;
      ctx.log('kubelet: started (systemctl start kubelet)');
      bootKubelet(true);
    },
    setNodeResolvesInstalledNames(resolve) {
      ctx.log(`node: ${Array.isArray(resolve) ? `of the installed domain's names, only ${resolve.join(', ') || 'none'} resolve` : `the installed domain's names ${resolve ? 'resolve' : 'no longer resolve'}`} on the node`);
      names.setInstalledNames(resolve);
    },
    setProxyReachesNode(reaches) {
      ctx.log(`site proxy: ${reaches ? 'reaches' : 'no longer reaches'} the node by its new names`);
      names.setProxyReachesNode(reaches);
    },
    stopKubelet() {
      if (!kubelet.running) return;
      ctx.log('kubelet: stopped (systemctl stop kubelet)');
      kubelet.stop();
      nodeLifecycle.kubeletStopped();
    },
    apiUp: () => api.isUp,
    injectHostileCsr: (kind) => injectHostileCsr(ctx, kind),
    degradeOperator(name, reason, message) {
      if (!(name in CLUSTER_OPERATORS)) throw new Error(`degradeOperator: no ClusterOperator ${JSON.stringify(name)} (known: ${Object.keys(CLUSTER_OPERATORS).join(', ')})`);
      if (!/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/.test(reason)) throw new Error(`degradeOperator: reason must be a CamelCase word, got ${JSON.stringify(reason)}`);
      file.state.injectedDegraded[name] = { reason, message: message ?? `${reason}: injected by the simulator` };
      file.save();
      publishOperator(name);
    },
    recoverOperator(name) {
      delete file.state.injectedDegraded[name];
      file.save();
      publishOperator(name);
    },
    async applyFaults(f: FaultRequest) {
      if (f.api) api.faults = { ...api.faults, ...(f.api as ApiFaults) };
      for (const [key, field] of [['apiUnavailableForMs', 'unavailableUntil'], ['apiResetForMs', 'resetUntil']] as const) {
        const ms = f[key];
        if (ms === undefined) continue;
        if (typeof ms !== 'number' || !(ms >= 0)) throw new Error(`${key}: expected simulated milliseconds >= 0`);
        api.faults[field] = clock.now() + ms;
      }
      if (f.apiNeverUp !== undefined) {
        file.state.faults.apiNeverUp = f.apiNeverUp;
        api.faults.neverUp = f.apiNeverUp;
        if (!f.apiNeverUp) void api.setUp(availability.up());
      }
      if (f.kubeletFilesNoCsrs !== undefined) file.state.faults.kubeletFilesNoCsrs = f.kubeletFilesNoCsrs;
      if (f.degrade) sim.degradeOperator(f.degrade.operator, f.degrade.reason, f.degrade.message);
      if (f.recover) sim.recoverOperator(f.recover);
      file.save();
      if (f.hostileCsr) {
        if (!HOSTILE_CSR_KINDS.includes(f.hostileCsr)) throw new Error(`hostileCsr: expected one of ${HOSTILE_CSR_KINDS.join(', ')}`);
        return { injected: await injectHostileCsr(ctx, f.hostileCsr) };
      }
      return {};
    },
    async waitFor(predicate, timeoutMs, what = 'condition') {
      // Never less than minutes: figures sized for an idle machine ran out at load 20–27 on 2 cores (issue 31),
      // and a deadline costs time only when the wait fails.
      timeoutMs = Math.max(timeoutMs, LOADED_MACHINE_WAIT_MS);
      const deadline = Date.now() + timeoutMs;
      let lastError: unknown;
      for (;;) {
        try {
          if (await predicate()) return;
          lastError = undefined;
        } catch (e) {
          // A predicate that reads through the API may meet an outage the cluster is going through.
          lastError = e;
        }
        if (Date.now() > deadline) {
          const why = lastError ? ` (last error: ${(lastError as Error).message})` : '';
          throw new Error(`simulator: timed out after ${timeoutMs} ms waiting for ${what}${why}\nrecent simulator log:\n${logLines.slice(-15).join('\n')}`);
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    snapshot(): SimulatorSnapshot {
      const cos: SimulatorSnapshot['clusterOperators'] = {};
      for (const co of store.list(R.clusterOperators)) {
        const conds = ((co.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []);
        const get = (t: string) => conds.find((c) => c.type === t)?.status;
        cos[co.metadata!.name!] = { Available: get('Available'), Progressing: get('Progressing'), Degraded: get('Degraded') };
      }
      const pool = machineConfig.poolState();
      return {
        simTime: clock.iso(),
        apiUp: api.isUp,
        apiDownReasons: availability.downReasons(),
        kubelet: { enabled: file.state.kubeletEnabled, running: kubelet.running, phase: kubelet.phase, csrs: [...kubelet.filed] },
        rollouts: rollouts.all().map((r) => ({ operator: r.owner, startedAt: clock.iso(r.startedAt), endsAt: clock.iso(r.endsAt), remainingSimMs: Math.max(0, r.endsAt - clock.now()) })),
        clusterOperators: cos,
        machineConfigPool: { rendered: pool.rendered, updating: pool.updating },
        faults: { ...file.state.faults },
      };
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      ctx.log('simulator: stopping');
      apiStartupCancel?.();
      kubelet.stop();
      clock.stop();
      unsubscribe();
      await control.close();
      await endpoints.stop();
      await api.close();
      file.flush();
      if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    },
  };

  const control = await startControlServer(sim, file.state.ports.control ?? (await stablePort()));
  file.state.ports.control = control.port;
  (sim as { controlUrl: string }).controlUrl = control.url;
  writeFileSync(join(dir, 'control-url'), `${control.url}\n`);
  file.flush();
  return sim;
}

/**
 * A running cluster's kubelet already holds certificates approved at the factory: issue them directly, as
 * the signer would have (client by the API's client CA, serving by the kubelet-serving signer).
 */
async function issueRunningKubeletCertificates(pkiDir: string, opts: ResolvedOptions, apiCa: CertificateAuthority, servingCa: CertificateAuthority): Promise<void> {
  mkdirSync(pkiDir, { recursive: true });
  const cn = `system:node:${opts.nodeName}`;
  const client = await buildCsr({ commonName: cn, organizations: ['system:nodes'] });
  const clientCert = signCsr(apiCa, client.csrPem, { usages: ['digital signature', 'client auth'], validityDays: 30 });
  writeFileSync(join(pkiDir, 'kubelet-client-current.pem'), `${clientCert.trim()}\n${client.keyPem.trim()}\n`, { mode: 0o600 });
  const serving = await buildCsr({ commonName: cn, organizations: ['system:nodes'], dnsNames: [opts.nodeName], ipAddresses: opts.kubeletIPs });
  const servingCert = signCsr(servingCa, serving.csrPem, { usages: ['digital signature', 'server auth'], validityDays: 30 });
  writeFileSync(join(pkiDir, 'kubelet-server-current.pem'), `${servingCert.trim()}\n${serving.keyPem.trim()}\n`, { mode: 0o600 });
}

/** The localhost-recovery-client service account, bound to cluster-admin (cluster-kube-apiserver-operator bindata/assets/kube-apiserver/localhost-recovery-client-crb.yaml). */
export const RECOVERY_CLIENT_USER = 'system:serviceaccount:openshift-kube-apiserver:localhost-recovery-client';
/** Revisions of the kube-apiserver static pod whose resources the node keeps: an old one, then the current one. */
const RECOVERY_TOKEN_REVISIONS = { stale: 9, current: 10 };

/**
 * The localhost-recovery-client token as the kube-apiserver's revisions copy it to the node:
 * /etc/kubernetes/static-pod-resources/kube-apiserver-pod-<revision>/secrets/localhost-recovery-client-token/token,
 * the credential of the static pod's own cert-regeneration controller (cluster-kube-apiserver-operator
 * bindata/assets/kube-apiserver/kubeconfig-cm.yaml, tokenFile). A legacy service-account token: it does not
 * expire. The current revision's token is valid, an older revision's is not (that secret was regenerated).
 * Derived from the CA key, so a persisted cluster keeps the same token across restarts.
 */
function writeRecoveryTokens(dir: string, api: ApiServer, apiCa: CertificateAuthority): string {
  const root = join(dir, 'static-pod-resources');
  const tokenOf = (revision: number) => createHash('sha256').update(`${apiCa.keyPem}|localhost-recovery-client|${revision}`).digest('base64url');
  for (const revision of Object.values(RECOVERY_TOKEN_REVISIONS)) {
    const tokenDir = join(root, `kube-apiserver-pod-${revision}`, 'secrets', 'localhost-recovery-client-token');
    mkdirSync(tokenDir, { recursive: true });
    writeFileSync(join(tokenDir, 'token'), tokenOf(revision), { mode: 0o600 });
  }
  api.addToken(tokenOf(RECOVERY_TOKEN_REVISIONS.current), { user: RECOVERY_CLIENT_USER, groups: ['system:serviceaccounts', 'system:serviceaccounts:openshift-kube-apiserver'] });
  api.addAccessRule({ user: RECOVERY_CLIENT_USER, verbs: '*', resources: '*' });
  return root;
}
