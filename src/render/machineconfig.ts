// The factory MachineConfig (DESIGN.md section 3, `render machineconfig`): the bundle (brotli, with its loader:
// ./payload.ts), its unit, the kubelet hold, the podman launcher, the stable internal IP and the site-config
// signing keys, as one machineconfiguration.openshift.io/v1 object with an Ignition 3.2.0 config.
// Deterministic: no timestamps, files sorted, so machineconfigs/ examples can be regenerated and compared byte
// for byte.
import { createHash } from 'node:crypto';
import { Document } from 'yaml';
import { UNIT_NAME, KUBELET_UNIT, UNSIGNED_MEDIA_FILE } from '../paths';
import { IGNITION_VERSION, ignitionFile, type IgnitionConfig, type IgnitionFile, type IgnitionUnit } from '../cluster/ignition';
import { renderDispatcherScript, renderNodeIpDropins, renderNodeIpHint, type InternalAddress } from './internal-ip';
import { DISPATCHER_PATHS, KUBELET_HOLD_DROPIN, MC_BUNDLE_PATH, MC_PAYLOAD_PATH, MC_WRAPPER_PATH, NODEIP_DROPIN, NODEIP_HINT_PATH, PODMAN_LAUNCHER_PATH, RUNTIME_ENV_PATH } from './layout';
import { defaultPodmanSettings, parseNodeImageRef, renderPodmanLauncher, renderRuntimeEnv } from './podman';
import { compressBundle, renderLoader } from './payload';
import type { TrustedKey } from './trusted-keys';
import { EARLY_NETWORK_UNIT, RENEW_SERVICE, RENEW_TIMER, renderAgentUnit, renderEarlyNetworkUnit, renderKubeletHoldDropin, renderRenewService, renderRenewTimer } from './unit';
import { LOCAL_DNS_DISPATCHER, LOCAL_DNS_NM_CONF, LOCAL_DNS_UNIT, renderLocalDnsDispatcher, renderLocalDnsNmConf, renderLocalDnsUnit } from './local-dns';

export type Runtime = 'host' | 'podman';
export type NodeIpPinning = 'hint' | 'dropin';

export interface MachineConfigOptions {
  role: string;
  /** Default `50-<role>-sno-reconfigure`: after the MCO's 01-<role>-kubelet, so our kubelet drop-ins merge over it. */
  name?: string;
  runtime: Runtime;
  /** Required for the podman runtime: NAME@sha256:DIGEST. There is no default image (README "At the factory" says why). */
  nodeImage?: string;
  nodeImageArchive?: string;
  bundle: Buffer;
  internalAddresses: readonly InternalAddress[];
  nodeIpPinning: NodeIpPinning;
  trustedKeys: readonly TrustedKey[];
  /** The factory accepts unsigned site-config media (`--allow-unsigned-media`); without it trusted keys are required. */
  allowUnsignedMedia?: boolean;
  /** Enable the unit right away instead of leaving that to `prepare` (which arms it just before shipping). */
  enable: boolean;
  /** Ship the node-local DNS for the cluster's own names (src/render/local-dns.ts); default true. */
  localDns?: boolean;
  version: string;
}

export interface MachineConfig {
  apiVersion: 'machineconfiguration.openshift.io/v1';
  kind: 'MachineConfig';
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: { config: IgnitionConfig };
}

export class RenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RenderError';
  }
}

const ROLE_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export const ANNOTATIONS = {
  version: 'sno-reconfigure.io/version',
  runtime: 'sno-reconfigure.io/runtime',
  bundleSha256: 'sno-reconfigure.io/bundle-sha256',
  /** `signed` (trusted keys installed) or `unsigned` (--allow-unsigned-media): the factory's choice, readable with `oc get mc`. */
  siteConfigMedia: 'sno-reconfigure.io/site-config-media',
} as const;

const UNSIGNED_MEDIA_RECORD = '# Rendered with --allow-unsigned-media: the factory accepts site-config media without a signature.\n# Unsigned media may carry only the network, names, pull secret, digest mirrors, NTP and timeouts. Installing a trusted key overrides this.\n';

export function defaultMachineConfigName(role: string): string {
  return `50-${role}-sno-reconfigure`;
}

function wrapperScript(): string {
  return `#!/bin/sh\n# sno-reconfigure on the node (host runtime): \`sno-reconfigure status\`, \`sno-reconfigure validate PATH\`, ...\nexec /usr/bin/node ${MC_BUNDLE_PATH} "$@"\n`;
}

export function buildMachineConfig(opts: MachineConfigOptions): MachineConfig {
  if (!ROLE_RE.test(opts.role) || opts.role.length > 63) {
    throw new RenderError(`--role "${opts.role}": expected a MachineConfigPool role name (lowercase letters, digits and '-', e.g. master)`);
  }
  if (opts.runtime === 'podman' && !opts.nodeImage) {
    throw new RenderError(
      '--runtime podman (the default: OpenShift nodes ship no Node.js) needs --node-image NAME@sha256:DIGEST, the Node image the agent ' +
        'runs in, pinned by digest (e.g. registry.access.redhat.com/ubi9/nodejs-24-minimal@sha256:…, as mirrored for your factory). ' +
        'For a RHEL or image-mode node that has Node.js 22 or later, pass --runtime host instead.',
    );
  }
  if (opts.runtime === 'host' && opts.nodeImage) {
    throw new RenderError('--node-image only applies to --runtime podman');
  }
  if (opts.internalAddresses.length === 0 && opts.nodeIpPinning === 'dropin') {
    throw new RenderError('--node-ip-pinning dropin needs --internal-ip');
  }
  if (opts.bundle.length === 0) throw new RenderError('the bundle is empty');
  if (opts.trustedKeys.length === 0 && !opts.allowUnsignedMedia) throw new RenderError('signed site-config media are the default: give --trusted-key PEMFILE, or --allow-unsigned-media');
  if (opts.trustedKeys.length > 0 && opts.allowUnsignedMedia) throw new RenderError('--trusted-key and --allow-unsigned-media contradict each other');

  const files: IgnitionFile[] = [ignitionFile(MC_PAYLOAD_PATH, compressBundle(opts.bundle)), ignitionFile(MC_BUNDLE_PATH, renderLoader(), { mode: 0o755, gzip: true })];
  let unitVariant: 'machineconfig' | 'podman' = 'machineconfig';
  if (opts.runtime === 'podman') {
    const image = parseNodeImageRef(opts.nodeImage ?? '');
    const settings = defaultPodmanSettings(image);
    if (opts.nodeImageArchive) settings.archive = opts.nodeImageArchive;
    files.push(ignitionFile(PODMAN_LAUNCHER_PATH, renderPodmanLauncher(), { mode: 0o755 }));
    files.push(ignitionFile(RUNTIME_ENV_PATH, renderRuntimeEnv(settings)));
    unitVariant = 'podman';
  } else {
    files.push(ignitionFile(MC_WRAPPER_PATH, wrapperScript(), { mode: 0o755 }));
  }

  const kubeletDropins = [{ name: KUBELET_HOLD_DROPIN, contents: renderKubeletHoldDropin() }];
  const units: IgnitionUnit[] = [];
  if (opts.internalAddresses.length > 0) {
    const script = renderDispatcherScript(opts.internalAddresses);
    // NetworkManager runs only root-owned scripts that group and others cannot write (NetworkManager-dispatcher(8)).
    for (const p of DISPATCHER_PATHS) files.push(ignitionFile(p, script, { mode: 0o755 }));
    if (opts.nodeIpPinning === 'hint') {
      files.push(ignitionFile(NODEIP_HINT_PATH, renderNodeIpHint(opts.internalAddresses)));
    } else {
      const dropins = renderNodeIpDropins(opts.internalAddresses);
      kubeletDropins.push({ name: NODEIP_DROPIN, contents: dropins.kubelet });
      units.push({ name: 'crio.service', dropins: [{ name: NODEIP_DROPIN, contents: dropins.crio }] });
    }
  }
  for (const key of opts.trustedKeys) files.push(ignitionFile(key.nodePath, key.pem));
  if (opts.allowUnsignedMedia) files.push(ignitionFile(UNSIGNED_MEDIA_FILE, UNSIGNED_MEDIA_RECORD));
  if (opts.localDns !== false) {
    files.push(ignitionFile(LOCAL_DNS_DISPATCHER, renderLocalDnsDispatcher(), { mode: 0o755 }));
    files.push(ignitionFile(LOCAL_DNS_NM_CONF, renderLocalDnsNmConf()));
    units.push({ name: LOCAL_DNS_UNIT, enabled: true, contents: renderLocalDnsUnit() });
  }

  const agentUnit: IgnitionUnit = { name: UNIT_NAME, contents: renderAgentUnit(unitVariant), ...(opts.enable ? { enabled: true } : {}) };
  units.push(agentUnit, { name: KUBELET_UNIT, dropins: kubeletDropins });
  // Armed with the agent (prepare enables both).
  units.push({ name: EARLY_NETWORK_UNIT, contents: renderEarlyNetworkUnit(unitVariant), ...(opts.enable ? { enabled: true } : {}) });
  // Shipped disabled: the run enables the timer when the site-config asks for renewal (spec.certificateRenewal).
  units.push({ name: RENEW_SERVICE, contents: renderRenewService(unitVariant) }, { name: RENEW_TIMER, contents: renderRenewTimer() });

  const paths = new Set<string>();
  for (const f of files) {
    if (paths.has(f.path)) throw new RenderError(`two files would be written to ${f.path}`);
    paths.add(f.path);
  }
  files.sort((a, b) => a.path.localeCompare(b.path));
  units.sort((a, b) => a.name.localeCompare(b.name));

  return {
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfig',
    metadata: {
      name: opts.name ?? defaultMachineConfigName(opts.role),
      labels: { 'machineconfiguration.openshift.io/role': opts.role },
      annotations: {
        [ANNOTATIONS.version]: opts.version,
        [ANNOTATIONS.runtime]: opts.runtime,
        [ANNOTATIONS.bundleSha256]: createHash('sha256').update(opts.bundle).digest('hex'),
        [ANNOTATIONS.siteConfigMedia]: opts.allowUnsignedMedia ? 'unsigned' : 'signed',
      },
    },
    spec: { config: { ignition: { version: IGNITION_VERSION }, storage: { files }, systemd: { units } } },
  };
}

export function machineConfigYaml(mc: MachineConfig): string {
  const doc = new Document(mc);
  const runtime = mc.metadata.annotations[ANNOTATIONS.runtime];
  const command = runtime === 'podman' ? 'sno-reconfigure-podman' : 'sno-reconfigure';
  doc.commentBefore = [
    ` ${mc.metadata.name}: installs sno-reconfigure (${runtime} runtime) on this pool's nodes.`,
    ` Rendered by \`sno-reconfigure render machineconfig\` ${mc.metadata.annotations[ANNOTATIONS.version]}. Apply with \`oc apply -f\`;`,
    ` after the MCO has rolled it out, run \`${command} prepare\` on the node just before shutting it down for shipping.`,
  ].join('\n');
  return doc.toString({ lineWidth: 0 });
}
