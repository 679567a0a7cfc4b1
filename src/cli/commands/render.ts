// `sno-reconfigure render machineconfig` (DESIGN.md section 3): prints the factory MachineConfig.
import * as path from 'node:path';
import { LocalHost } from '../../host/host';
import { createClusterClient, type ClosableClusterClient } from '../../cluster/client';
import { loadKubeconfig } from '../../cluster/kubeconfig';
import { singleNodeInternalIPs } from '../../factory/preflight';
import { CidrError, internalAddressProblem, parseInternalAddresses } from '../../render/internal-ip';
import { buildMachineConfig, defaultMachineConfigName, machineConfigYaml, RenderError, type NodeIpPinning, type Runtime } from '../../render/machineconfig';
import { ImageRefError } from '../../render/podman';
import { checkDistinctKeyPaths, parseTrustedKey, TrustedKeyError } from '../../render/trusted-keys';
import { NODE_IMAGE_ARCHIVE_PATH } from '../../render/layout';
import { KUBELET_HOLD_FILE } from '../../paths';
import { TRUSTED_KEYS_DIR } from '../../paths';
import { VERSION } from '../../version';
import { defaultBundlePath } from './workstation';
import { RENDER_SUMMARY } from './summaries';
import { EXIT_FAILURE, EXIT_OK, UsageError, boolOpt, listOpt, stringOpt, type Command } from '../command';

/** esbuild's banner (esbuild.config.mjs), or the RPM's rewrite of it: how a file shows it is the agent's bundle. */
const BUNDLE_SHEBANGS = ['#!/usr/bin/env node\n', '#!/usr/bin/node\n'];

export const renderCommand: Command = {
  name: 'render',
  summary: RENDER_SUMMARY,
  help: `Usage: sno-reconfigure render machineconfig [options]

Prints a machineconfiguration.openshift.io/v1 MachineConfig (Ignition 3.2.0) that installs this agent on the
nodes of a pool: the bundle (gzip + base64), sno-reconfigure.service, a kubelet drop-in that keeps kubelet down
while ${KUBELET_HOLD_FILE} exists, and optionally the podman launcher, the stable internal IP
and site-config signing keys. Apply it at the factory with \`oc apply -f\`, then run \`sno-reconfigure-podman prepare\`
on the node (\`sno-reconfigure prepare\` with --runtime host).

Options:
  --role ROLE            MachineConfigPool role label (default master)
  --name NAME            object name (default ${defaultMachineConfigName('<role>')})
  --runtime host|podman  podman (default; RHCOS, which ships no Node.js): the bundle runs in --node-image,
                         loaded from an archive kept on the node; host: /usr/bin/node on the node runs the
                         bundle (RHEL, or an image-mode node layered with Node.js >= 22)
  --node-image REF       the Node image for --runtime podman, pinned by digest: NAME@sha256:DIGEST (required:
                         no default, pin the image your factory tested and can pull, e.g.
                         ubi9/nodejs-24-minimal, supported until 2028-04-30)
  --node-image-archive PATH
                         where the factory saves that image (default ${NODE_IMAGE_ARCHIVE_PATH})
  --internal-ip CIDR     the node's installed IP on br-ex with its prefix (e.g. 192.168.111.20/24; one per
                         family); kubelet and CRI-O are pinned to it, and the node-local DNS answers with it
                         (without it, \`prepare\` refuses the node-local DNS: give --no-local-dns then)
  --kubeconfig PATH      check --internal-ip against the Node's InternalIPs (default $KUBECONFIG)
  --node-ip-pinning hint|dropin
                         hint: KUBELET_NODEIP_HINT for nodeip-configuration (default; SNO on platform none);
                         dropin: kubelet and CRI-O drop-ins, where nodeip-configuration does not run
  --trusted-key PEMFILE  an Ed25519 or ECDSA P-256 public key trusted to sign site-configs (repeatable;
                         installed in ${TRUSTED_KEYS_DIR}/). Signed media are the default: one of
                         --trusted-key and --allow-unsigned-media is required
  --allow-unsigned-media accept site-configs without a signature (anyone with a stick at the node can then
                         reconfigure it; unsigned media may carry only the network, names, pull secret,
                         digest mirrors, NTP and timeouts)
  --bundle PATH          the bundle to embed (default: this program's own file)
  --no-local-dns         no node-local DNS for the cluster's own names (the site DNS must serve them)
  --enable               enable the unit right away (default: \`prepare\` enables it just before shipping)
`,
  options: {
    role: { type: 'string' },
    name: { type: 'string' },
    runtime: { type: 'string' },
    'node-image': { type: 'string' },
    'node-image-archive': { type: 'string' },
    'internal-ip': { type: 'string', multiple: true },
    kubeconfig: { type: 'string' },
    'node-ip-pinning': { type: 'string' },
    'trusted-key': { type: 'string', multiple: true },
    'allow-unsigned-media': { type: 'boolean' },
    bundle: { type: 'string' },
    enable: { type: 'boolean' },
    'no-local-dns': { type: 'boolean' },
  },
  async run(args, io) {
    const [what, ...extra] = args.positionals;
    if (what !== 'machineconfig' || extra.length > 0) {
      throw new UsageError(what === undefined ? 'say what to render: `render machineconfig`' : `cannot render "${[what, ...extra].join(' ')}"; only \`render machineconfig\``);
    }
    const runtime = stringOpt(args, 'runtime') ?? 'podman';
    if (runtime !== 'host' && runtime !== 'podman') throw new UsageError(`--runtime must be host or podman, not "${runtime}"`);
    const keySources = listOpt(args, 'trusted-key');
    const allowUnsignedMedia = boolOpt(args, 'allow-unsigned-media');
    if (keySources.length === 0 && !allowUnsignedMedia) {
      throw new UsageError('site-config media must be signed unless the factory says otherwise: pass --trusted-key PEMFILE (the public key that signs your site-configs; repeatable), or --allow-unsigned-media to accept unsigned media');
    }
    if (keySources.length > 0 && allowUnsignedMedia) throw new UsageError('--trusted-key and --allow-unsigned-media contradict each other: with a trusted key, media must be signed');
    const pinning = stringOpt(args, 'node-ip-pinning') ?? 'hint';
    if (pinning !== 'hint' && pinning !== 'dropin') throw new UsageError(`--node-ip-pinning must be hint or dropin, not "${pinning}"`);

    const files = new LocalHost({ root: '/', env: io.env });
    const abs = (p: string): string => path.resolve(io.cwd, p);
    try {
      const bundlePath = stringOpt(args, 'bundle') ?? defaultBundlePath();
      if (!bundlePath) throw new RenderError('cannot tell where this program\'s bundle is; pass --bundle PATH');
      const bundle = await readBundle(files, abs(bundlePath));
      const trustedKeys = await Promise.all(keySources.map(async (src) => parseTrustedKey(src, await readText(files, abs(src), `--trusted-key ${src}`))));
      checkDistinctKeyPaths(trustedKeys, keySources);
      const archive = stringOpt(args, 'node-image-archive');
      if (archive !== undefined && !path.posix.isAbsolute(archive)) throw new RenderError(`--node-image-archive "${archive}": expected an absolute node path`);
      const name = stringOpt(args, 'name');
      const nodeImage = stringOpt(args, 'node-image');
      const internalAddresses = parseInternalAddresses(listOpt(args, 'internal-ip'));
      const kubeconfig = stringOpt(args, 'kubeconfig') ?? io.env.KUBECONFIG;
      if (internalAddresses.length > 0) {
        const note = await checkAgainstCluster(internalAddresses.map((a) => a.address), kubeconfig && abs(kubeconfig));
        if (note) io.err(`sno-reconfigure render: ${note}\n`);
      } else if (!boolOpt(args, 'no-local-dns')) {
        // Said now, before the MCO rolls this out with a reboot: prepare refuses it (src/factory/local-dns.ts).
        io.err('sno-reconfigure render: note: without --internal-ip, `prepare` refuses the node-local DNS (it would answer the installed api, api-int and *.apps with the factory address, gone at the site): add --internal-ip ADDRESS/PREFIX, or --no-local-dns if every site\'s DNS serves those names\n');
      }
      const mc = buildMachineConfig({
        role: stringOpt(args, 'role') ?? 'master',
        ...(name ? { name } : {}),
        runtime: runtime as Runtime,
        ...(nodeImage ? { nodeImage } : {}),
        ...(archive ? { nodeImageArchive: archive } : {}),
        bundle,
        internalAddresses,
        nodeIpPinning: pinning as NodeIpPinning,
        trustedKeys,
        allowUnsignedMedia,
        enable: boolOpt(args, 'enable'),
        localDns: !boolOpt(args, 'no-local-dns'),
        version: VERSION,
      });
      io.out(machineConfigYaml(mc));
      return EXIT_OK;
    } catch (e) {
      if (e instanceof RenderError || e instanceof CidrError || e instanceof TrustedKeyError || e instanceof ImageRefError) {
        io.err(`sno-reconfigure render: ${e.message}\n`);
        return EXIT_FAILURE;
      }
      throw e;
    }
  },
};

/**
 * Refuses (RenderError) an internal IP that is not the Node's installed IP when the cluster can be seen; says
 * why it could not check otherwise. `prepare` checks again on the node in any case.
 */
async function checkAgainstCluster(internal: string[], kubeconfig: string | undefined): Promise<string | undefined> {
  const later = '`prepare` checks it on the node';
  if (!kubeconfig) return `note: --internal-ip was not checked against the cluster (no --kubeconfig or KUBECONFIG); ${later}`;
  let node: { name: string; addresses: string[] } | undefined;
  let client: ClosableClusterClient | undefined;
  try {
    const local = new LocalHost();
    client = createClusterClient(await loadKubeconfig((p) => local.readFile(p), path.resolve(kubeconfig)), { timeoutMs: 15_000 });
    node = await singleNodeInternalIPs(client);
  } catch (e) {
    return `note: --internal-ip was not checked against the cluster, which could not be read through ${kubeconfig} (${(e as Error).message}); ${later}`;
  } finally {
    client?.close();
  }
  if (!node) return `note: --internal-ip was not checked: the cluster has not exactly one Node; ${later}`;
  const problem = internalAddressProblem(internal, node.name, node.addresses);
  if (problem) throw new RenderError(`--internal-ip: ${problem}. Pass the installed address with its prefix`);
  return undefined;
}

async function readText(files: LocalHost, file: string, what: string): Promise<string> {
  try {
    return await files.readText(file);
  } catch (e) {
    throw new RenderError(`${what}: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

async function readBundle(files: LocalHost, file: string): Promise<Buffer> {
  let bytes: Buffer;
  try {
    bytes = await files.readFile(file);
  } catch (e) {
    throw new RenderError(`--bundle: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (!BUNDLE_SHEBANGS.some((s) => bytes.subarray(0, s.length).equals(Buffer.from(s)))) {
    throw new RenderError(`--bundle: ${file} is not the agent's bundle (dist/sno-reconfigure.cjs starts with "#!/usr/bin/env node"); pass --bundle PATH`);
  }
  return bytes;
}
