// What simulated SNO to build and how fast it behaves. Every duration is in SIMULATED milliseconds; the
// single `timeScale` knob turns them into real time (0.001 in tests: a 6-minute rollout takes 360 ms).
import type { InstalledName } from './names';


/** Rollout and reaction times of the simulated cluster, in simulated milliseconds. */
export interface SimDurations {
  /** kubelet started → static pods up → kube-apiserver answers (real SNO: 1–3 min). */
  apiStartup: number;
  /** A new kube-apiserver static-pod revision, NodeInstaller to Available (real SNO: 5–8 min). */
  kubeApiserverRollout: number;
  /**
   * At the end of a kube-apiserver revision the single static pod is replaced: on SNO the API is
   * unreachable meanwhile (the last part of kubeApiserverRollout). 0 disables the outage.
   */
  kubeApiserverRestartOutage: number;
  /** openshift-apiserver deployment rollout after an Ingress appsDomain change (~2 min). */
  openshiftApiserverRollout: number;
  /** oauth-openshift deployment rollout after an oauth componentRoute change (~1–2 min). */
  authenticationRollout: number;
  /** console / downloads custom route rollout (~1–2 min). */
  consoleRollout: number;
  /** router-default deployment rollout after an IngressController defaultCertificate change (~2 min). */
  ingressRollout: number;
  /** MachineConfigPool master update: render, drain (if needed), apply, reboot (if needed) (3–5 min). */
  machineConfigRollout: number;
  /** Part of a rebooting MachineConfigPool update during which the node is down (API and kubelet). */
  rebootOutage: number;
  /** Approved CSR → certificate issued by the kube-controller-manager signer. */
  csrSigning: number;
  /**
   * A kubelet CSR that stays unsigned this long is abandoned and a new one filed (client-go
   * certificate manager: certificateWaitTimeout = 15 min, util/certificate/certificate_manager.go).
   */
  csrRefile: number;
  /** Kubelet connected with its client certificate → Node Ready. */
  nodeReady: number;
  /** Kubelet node-status report period when nothing changes (kubelet nodeStatusReportFrequency = 5 min). */
  nodeStatusReport: number;
  /** Kubelet stopped → node controller marks the Node Unknown (node-monitor-grace-period = 40 s). */
  nodeMonitorGrace: number;
}

/**
 * csrRefile for a compressed clock: the kubelet gives an unsigned CSR 15 minutes of real time, and the agent approves
 * it in real time (seconds, longer on a loaded machine). Scaled down to 1.8–4.5 real seconds, a loaded test machine
 * had the kubelet abandon each CSR just before its approval landed, ten times over, until the run timed out (a
 * fresh-clone run at load 10, 2026-11-27). A run's refiling must not depend on the machine's load: at least
 * `realMs` of real time (the bench keeps 15 real minutes for the same reason, test/bench/latency.ts).
 */
export function csrRefileAtLeast(realMs: number, timeScale: number): number {
  return Math.max(DEFAULT_DURATIONS.csrRefile, Math.ceil(realMs / timeScale));
}

export const DEFAULT_DURATIONS: SimDurations = {
  apiStartup: 2 * 60_000,
  kubeApiserverRollout: 6 * 60_000,
  kubeApiserverRestartOutage: 45_000,
  openshiftApiserverRollout: 2 * 60_000,
  authenticationRollout: 90_000,
  consoleRollout: 90_000,
  ingressRollout: 2 * 60_000,
  machineConfigRollout: 4 * 60_000,
  rebootOutage: 3 * 60_000,
  csrSigning: 1_000,
  csrRefile: 15 * 60_000,
  nodeReady: 20_000,
  nodeStatusReport: 5 * 60_000,
  nodeMonitorGrace: 40_000,
};

/**
 * Where the kubelet is when the simulator starts:
 * - `masked`: as shipped from the factory — kubelet masked, the API is down until startKubelet();
 * - `started`: kubelet starting now — the API comes up after apiStartup, then the kubelet files CSRs;
 * - `running`: a running cluster — API up, kubelet certificates already issued, Node Ready.
 */
export type KubeletInitialState = 'masked' | 'started' | 'running';

export interface SimulatorOptions {
  /** Directory for kubeconfigs, CA, control URL (a fresh temp dir when absent; removed on stop only if temp). */
  dir?: string;
  /** Persisted mode: the cluster (store, kubelet certificates, operator progress) survives a restart. */
  stateDir?: string;
  /** One knob for all delays: 1 = real durations (demo), 0.001 in tests. */
  timeScale?: number;
  clusterName?: string;
  /** The factory base domain: api.<clusterName>.<baseDomain>, *.apps.<clusterName>.<baseDomain>. */
  baseDomain?: string;
  nodeName?: string;
  /** The node's internal IPs (the stable br-ex IP of a relocatable SNO, seed 000). */
  nodeIPs?: string[];
  /** Addresses the kubelet reports at the site (defaults to nodeIPs); its serving CSR carries these. */
  kubeletIPs?: string[];
  /** OpenShift version: ClusterVersion status.desired.version, ClusterOperator versions, /version. */
  version?: string;
  /**
   * The version the cluster was installed with (default: `version`). It decides the groups of the bootstrap
   * certificate in /etc/kubernetes/kubeconfig, which is never re-rendered after install: see
   * `bootstrapGroupsFor`.
   */
  installedVersion?: string;
  durations?: Partial<SimDurations>;
  /**
   * How long the node was powered off before this start (the shipment), in days: the node-local
   * kubeconfigs' client certificate was issued that much earlier (see nodeAdminClientValidity).
   */
  poweredOffDays?: number;
  /**
   * How old node-system-admin-signer was when it issued the node-kubeconfigs' client certificate, in days
   * (default 60; the operator rotates it at 292 of its 365 days, from 4.19 at 876 of 1095, so up to ~320 / ~900): see nodeAdminSignerValidity.
   */
  nodeAdminSignerAgeDays?: number;
  kubelet?: KubeletInitialState;
  /**
   * Whether the node resolves the installed domain's api, api-int and *.apps (default true: a node-local DNS or
   * a site DNS that publishes them); false models a plain-installer SNO at a site without either; a list names
   * those that do, e.g. ['api-int'] for a site DNS that publishes only that one (cluster/names.ts).
   */
  nodeResolvesInstalledNames?: boolean | readonly InstalledName[];
  /**
   * Whether the site's proxy reaches the node by its new names (default true: the site's DNS publishes them);
   * false is a proxy elsewhere. It never reaches the installed (factory) domain's names (cluster/names.ts).
   */
  proxyReachesNode?: boolean;
  /** Simulated-cluster faults at start (API faults are on `sim.api.faults`). */
  faults?: { apiNeverUp?: boolean; kubeletFilesNoCsrs?: boolean };
  /** Fixed API port (0 = any). A persisted simulator keeps the port it got first. */
  apiPort?: number;
}

export interface ResolvedOptions {
  timeScale: number;
  clusterName: string;
  baseDomain: string;
  nodeName: string;
  nodeIPs: string[];
  kubeletIPs: string[];
  version: string;
  installedVersion: string;
  poweredOffDays: number;
  nodeAdminSignerAgeDays: number;
  nodeResolvesInstalledNames: boolean | readonly InstalledName[];
  proxyReachesNode: boolean;
  durations: SimDurations;
  kubelet: KubeletInitialState;
  faults: { apiNeverUp: boolean; kubeletFilesNoCsrs: boolean };
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const VERSION = /^4\.(\d+)\.(\d+)$/;

/** Applies the defaults and rejects nonsense with a message naming the option. */
export function resolveOptions(opts: SimulatorOptions = {}): ResolvedOptions {
  const timeScale = opts.timeScale ?? 1;
  if (!(timeScale > 0) || !Number.isFinite(timeScale)) throw new Error(`timeScale: expected a positive number, got ${String(opts.timeScale)}`);
  const clusterName = opts.clusterName ?? 'sno1';
  if (!DNS_LABEL.test(clusterName)) throw new Error(`clusterName: expected a DNS label, got ${JSON.stringify(clusterName)}`);
  const baseDomain = opts.baseDomain ?? 'factory.example.com';
  if (!DNS_NAME.test(baseDomain)) throw new Error(`baseDomain: expected a DNS name, got ${JSON.stringify(baseDomain)}`);
  const nodeName = opts.nodeName ?? `${clusterName}-node`;
  if (!DNS_NAME.test(nodeName) && !DNS_LABEL.test(nodeName)) throw new Error(`nodeName: expected a DNS name, got ${JSON.stringify(nodeName)}`);
  const nodeIPs = opts.nodeIPs ?? ['192.168.111.20'];
  if (nodeIPs.length === 0) throw new Error('nodeIPs: expected at least one IP address');
  for (const [i, ip] of nodeIPs.entries()) if (!isIP(ip)) throw new Error(`nodeIPs[${i}]: expected an IP address, got ${JSON.stringify(ip)}`);
  const kubeletIPs = opts.kubeletIPs ?? nodeIPs;
  for (const [i, ip] of kubeletIPs.entries()) if (!isIP(ip)) throw new Error(`kubeletIPs[${i}]: expected an IP address, got ${JSON.stringify(ip)}`);
  const version = opts.version ?? '4.14.12';
  if (!VERSION.test(version)) throw new Error(`version: expected an OpenShift 4.y.z version, got ${JSON.stringify(version)}`);
  const installedVersion = opts.installedVersion ?? version;
  if (!VERSION.test(installedVersion)) throw new Error(`installedVersion: expected an OpenShift 4.y.z version, got ${JSON.stringify(installedVersion)}`);
  if (minorVersion(installedVersion) > minorVersion(version)) throw new Error(`installedVersion: ${installedVersion} is newer than the running version ${version}`);
  const durations = { ...DEFAULT_DURATIONS };
  for (const [key, value] of Object.entries(opts.durations ?? {})) {
    if (!(key in DEFAULT_DURATIONS)) throw new Error(`durations.${key}: unknown duration (known: ${Object.keys(DEFAULT_DURATIONS).join(', ')})`);
    if (typeof value !== 'number' || !(value >= 0)) throw new Error(`durations.${key}: expected simulated milliseconds >= 0, got ${String(value)}`);
    durations[key as keyof SimDurations] = value;
  }
  if (durations.kubeApiserverRestartOutage > durations.kubeApiserverRollout) {
    throw new Error('durations.kubeApiserverRestartOutage: must not exceed durations.kubeApiserverRollout');
  }
  if (durations.rebootOutage > durations.machineConfigRollout) throw new Error('durations.rebootOutage: must not exceed durations.machineConfigRollout');
  const poweredOffDays = opts.poweredOffDays ?? 0;
  if (!(poweredOffDays >= 0) || !Number.isFinite(poweredOffDays)) throw new Error(`poweredOffDays: expected a number of days >= 0, got ${String(opts.poweredOffDays)}`);
  const nodeAdminSignerAgeDays = opts.nodeAdminSignerAgeDays ?? 60;
  if (!(nodeAdminSignerAgeDays >= 0) || !Number.isFinite(nodeAdminSignerAgeDays)) throw new Error(`nodeAdminSignerAgeDays: expected a number of days >= 0, got ${String(opts.nodeAdminSignerAgeDays)}`);
  const kubelet = opts.kubelet ?? 'masked';
  if (!['masked', 'started', 'running'].includes(kubelet)) throw new Error(`kubelet: expected masked, started or running, got ${JSON.stringify(kubelet)}`);
  return {
    timeScale,
    clusterName,
    baseDomain,
    nodeName,
    nodeIPs: [...nodeIPs],
    kubeletIPs: [...kubeletIPs],
    version,
    installedVersion,
    poweredOffDays,
    nodeAdminSignerAgeDays,
    nodeResolvesInstalledNames: opts.nodeResolvesInstalledNames ?? true,
    proxyReachesNode: opts.proxyReachesNode ?? true,
    durations,
    kubelet,
    faults: { apiNeverUp: opts.faults?.apiNeverUp ?? false, kubeletFilesNoCsrs: opts.faults?.kubeletFilesNoCsrs ?? false },
  };
}

/**
 * The O of the installer's bootstrap client certificate (the kubelet's --bootstrap-kubeconfig), i.e. the
 * node-bootstrapper's groups without system:authenticated. openshift/installer master (4.14)
 * pkg/asset/tls/kubelet.go KubeletClientCertKey: Organization [system:serviceaccounts:openshift-machine-config-operator,
 * system:serviceaccounts]; before PR #7032 (OCPBUGS-8349, merged 2023-03-28) only the first.
 */
export function bootstrapGroupsFor(installedVersion: string): string[] {
  return minorVersion(installedVersion) >= 14
    ? ['system:serviceaccounts:openshift-machine-config-operator', 'system:serviceaccounts']
    : ['system:serviceaccounts:openshift-machine-config-operator'];
}

const DAY_MS = 86_400_000;
/** The operator refreshes node-system-admin-client after 30 days: at shutdown the one in use is up to that old. */
const NODE_ADMIN_CLIENT_AGE_AT_SHUTDOWN_DAYS = 25;

/**
 * The validity of node-system-admin-client, the client certificate of every node-kubeconfig (localhost,
 * localhost-recovery, lb-ext, lb-int): 120 days on 4.12-4.15 and 2 years from 4.16, refreshed after 30 days
 * (openshift/cluster-kube-apiserver-operator release-4.12..4.16
 * pkg/operator/certrotationcontroller/certrotationcontroller.go). It was last refreshed some days before the
 * node was shut down, and `poweredOffDays` passed since then.
 */
export function nodeAdminClientValidity(o: Pick<ResolvedOptions, 'version' | 'poweredOffDays'>, nowMs: number): { notBefore: Date; validityDays: number } {
  const validityDays = minorVersion(o.version) >= 16 ? 730 : 120;
  return { notBefore: new Date(nowMs - (o.poweredOffDays + NODE_ADMIN_CLIENT_AGE_AT_SHUTDOWN_DAYS) * DAY_MS), validityDays };
}

/**
 * node-system-admin-signer, which issues node-system-admin-client: valid 365 days, rotated at 292, on 4.12 to 4.18
 * (openshift/cluster-kube-apiserver-operator release-4.12..4.18
 * pkg/operator/certrotationcontroller/certrotationcontroller.go); from 4.19 valid 3 years, rotated at 876 days
 * (release-4.19..4.23, same file: `3 * devRotationExceptionYear`, commit 7f8eb2925 "extend node-system-admin-signer
 * lifetime"). Its clients are not clamped to it (library-go NewClientCertificateTemplateForDuration), so up to 4.18 a
 * client issued late in the signer's life, and every 2-year client of 4.16–4.18, stops verifying when the signer
 * expires, before its own NotAfter; from 4.19 the client's own NotAfter comes first unless the signer was already
 * old when it issued it.
 */
export function nodeAdminSignerValidity(o: Pick<ResolvedOptions, 'version' | 'poweredOffDays' | 'nodeAdminSignerAgeDays'>, nowMs: number): { notBefore: Date; validityDays: number } {
  const clientIssued = nodeAdminClientValidity(o, nowMs).notBefore.getTime();
  return { notBefore: new Date(clientIssued - o.nodeAdminSignerAgeDays * DAY_MS), validityDays: minorVersion(o.version) >= 19 ? 3 * 365 : 365 };
}

/** Minor version number, e.g. 14 for 4.14.12. */
export function minorVersion(version: string): number {
  const m = VERSION.exec(version);
  return m ? Number(m[1]) : 0;
}

function isIP(s: string): boolean {
  return /^(\d{1,3})(\.\d{1,3}){3}$/.test(s) ? s.split('.').every((o) => Number(o) <= 255) : /^[0-9a-fA-F:]+$/.test(s) && s.includes(':');
}

/** Names derived from the options that many parts need. */
export function clusterNames(o: Pick<ResolvedOptions, 'clusterName' | 'baseDomain'>) {
  const base = `${o.clusterName}.${o.baseDomain}`;
  return {
    clusterDomain: base,
    api: `api.${base}`,
    apiInt: `api-int.${base}`,
    apps: `apps.${base}`,
  };
}
