// The site-config after loading and validation, with every referenced file read and resolved. This is what
// the steps consume; the on-disk format is the contract in DESIGN.md section 4 (see schema.ts).
import type { ManifestObject } from './manifests';

export interface MachineMatch {
  systemUUID?: string;
  serialNumber?: string;
  macAddress?: string;
}

export interface PullSecretEntry {
  auth?: string;
  username?: string;
  password?: string;
  email?: string;
}

export interface PullSecret {
  auths: Record<string, PullSecretEntry>;
}

export interface CertificatePair {
  certPem: string;
  keyPem: string;
}

export interface MirrorRule {
  source: string;
  mirrors: string[];
}

/** Every wait's deadline in milliseconds (defaults applied; `spec.timeouts` overrides). */
export interface Timeouts {
  network: number;
  /** How long the clock step waits for chronyd to synchronise with the site's NTP servers. */
  clock: number;
  kubelet: number;
  apiReady: number;
  csr: number;
  settle: number;
  /** How long every settle condition must hold at once (operators flap). */
  settleStability: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = {
  network: 5 * 60_000,
  clock: 3 * 60_000,
  kubelet: 5 * 60_000,
  apiReady: 30 * 60_000,
  csr: 20 * 60_000,
  settle: 45 * 60_000,
  settleStability: 2 * 60_000,
};

export interface ResolvedSiteConfig {
  /** metadata.name */
  name: string;
  /** metadata.issued and metadata.expires of signed media (absent on unsigned media, where they carry no weight). */
  issued?: string;
  expires?: string;
  match?: MachineMatch;
  clusterName?: string;
  hostname?: string;
  baseDomain: string;
  network?: {
    /** nmstate desired state (inline or from nmstateFile). */
    nmstate: Record<string, unknown>;
    verify: { ping: string[]; resolve: string[] };
  };
  pullSecret?: PullSecret;
  pullSecretMode: 'merge' | 'replace';
  imageDigestMirrors: MirrorRule[];
  /** spec.imageTagMirrors (ImageTagMirrorSet, OpenShift >= 4.13); absent when the site-config gives none. */
  imageTagMirrors?: MirrorRule[];
  /** PEM, one or more certificates. */
  additionalTrustBundle?: string;
  certificates: { api?: CertificatePair; ingress?: CertificatePair };
  /** timer: the run enables sno-reconfigure-renew.timer (daily; renews at 80 % of a certificate's lifetime). Default manual. */
  certificateRenewal?: 'manual' | 'timer';
  /** spec.nodeLabels: set these on the node, remove those (never a reserved prefix: schema.ts). */
  nodeLabels?: { set: Record<string, string>; remove: string[] };
  /** spec.kubeadminPassword: a bcrypt hash for kube-system/kubeadmin, or remove that secret. Never logged. */
  kubeadminPassword?: { hash: string } | { remove: true };
  /** spec.ssh: the keys for `core` (inline and file, each once); `replace` drops the factory's keys, `keep` adds to them. */
  ssh?: { authorizedKeys: string[]; factoryKeys: 'replace' | 'keep' };
  /** spec.ntp: chronyd's time sources at the site (each at least one entry when given; both empty never). */
  ntp?: { servers: string[]; pools: string[] };
  /** spec.proxy: Proxy/cluster's spec (URLs may hold credentials: never logged), its CA bundle as PEM. */
  /** spec.extraManifestFiles: the objects, each with the file it came from, in file order. */
  extraManifests?: { file: string; object: ManifestObject }[];
  proxy?: { httpProxy?: string; httpsProxy?: string; noProxy: string[]; trustedCA?: string };
  timeouts: Timeouts;
  /** Read from image-based install's media (seed-reconfiguration.ts): what only recert could change, for the node to check. */
  imageBased?: { nodeIPs?: string[]; clusterID?: string };
}

export interface LoadedSiteConfig {
  resolved: ResolvedSiteConfig;
  /** The site-config file that was loaded (absolute path on this machine). */
  sourcePath: string;
  /** sha256 (hex) over the site-config file and every file it references: a changed config = a new run. */
  digest: string;
  warnings: ValidationProblem[];
}

export interface ValidationProblem {
  /** Field path, e.g. `spec.network.nmstate.interfaces[0].ipv4.address[0].ip`, or a file path. */
  path: string;
  message: string;
}
