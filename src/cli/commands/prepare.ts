// `sno-reconfigure prepare` (DESIGN.md section 3): factory preflight, then arm the node for shipping.
import * as path from 'node:path';
import { createClusterClient, type ClosableClusterClient } from '../../cluster/client';
import { loadKubeconfig } from '../../cluster/kubeconfig';
import { prepare, type PrepareResult } from '../../factory/prepare';
import type { AdminKubeconfigInput } from '../../factory/admin-kubeconfig';
import { LocalHost } from '../../host/host';
import { BASELINE_FILE, FACTORY_ADMIN_KUBECONFIG, INVENTORY_ROW_FILE } from '../../paths';
import { KUBELET_HOLD_FILE } from '../../paths';
import { VERSION } from '../../version';
import { EXIT_FAILURE, EXIT_OK, UsageError, boolOpt, stringOpt, type Command } from '../command';
import { NODE_OPTIONS, NODE_OPTIONS_HELP, hostFrom, kubeconfigFrom, stateDirFrom } from '../common';
import { PREPARE_SUMMARY } from './summaries';

const DAY_MS = 86_400_000;
/** A healthy node has 3-30 days left on kubelet's 30-day certificates (see src/factory/preflight.ts). */
export const DEFAULT_MIN_CERT_VALIDITY = '7d';

/** `30d`, `36h`, `90m`: how long the kubelet certificates must stay valid. */
export function parseValidity(text: string): number {
  const m = /^(\d+)(d|h|m)$/.exec(text.trim());
  if (!m || Number(m[1]) <= 0) throw new UsageError(`--min-cert-validity must be a positive number of days, hours or minutes (e.g. 30d, 36h), not "${text}"`);
  return Number(m[1]) * { d: DAY_MS, h: 3_600_000, m: 60_000 }[m[2] as 'd' | 'h' | 'm'];
}

/** The technician's file, read where prepare runs (it is not a node path under --root). */
async function readAdminKubeconfig(file: string | undefined, io: { env: NodeJS.ProcessEnv; cwd: string }): Promise<AdminKubeconfigInput | undefined> {
  if (file === undefined) return undefined;
  const source = path.resolve(io.cwd, file);
  try {
    return { source, bytes: await new LocalHost({ root: '/', env: io.env }).readFile(source) };
  } catch (e) {
    throw new Error(`--admin-kubeconfig ${file}: cannot read ${source} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

export function renderPrepare(r: PrepareResult): string {
  const lines = ['Preflight:'];
  const width = Math.max(...r.checks.map((c) => c.id.length));
  for (const c of r.checks) {
    lines.push(`  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.id.padEnd(width)}  ${c.detail}`);
    if (!c.ok && c.remedy) lines.push(`  ${' '.repeat(4)}  ${' '.repeat(width)}  → ${c.remedy}`);
  }
  const failed = r.checks.filter((c) => !c.ok);
  lines.push('');
  if (failed.length > 0) {
    lines.push(`Refused: ${failed.length} check${failed.length > 1 ? 's' : ''} failed (${failed.map((c) => c.id).join(', ')}). Nothing was changed.`);
    lines.push('Once they pass, prepare would:');
    for (const a of r.actions) lines.push(`  - ${a.description}`);
  } else if (r.dryRun) {
    lines.push('Dry run, nothing changed. prepare would:');
    for (const a of r.actions) lines.push(`  - ${a.description}`);
  } else {
    lines.push('Done:');
    for (const a of r.actions) lines.push(`  - ${a.description}`);
    lines.push('');
    lines.push(`Prepared. Shut the node down now (\`systemctl poweroff\`): at the next boot kubelet stays down (${KUBELET_HOLD_FILE})`);
    lines.push('and sno-reconfigure.service waits for the site-config.');
    if (r.shipBy) lines.push(`Power it on at its site before ${r.shipBy}, when the first of kubelet's and the agent's certificates expires (later works too, more slowly).`);
    if (r.inventoryRow) {
      lines.push(`This node's inventory row, in ${INVENTORY_ROW_FILE} (copy it to the workstation: media build --nodes takes these rows as they are):`);
      for (const [k, v] of Object.entries(r.inventoryRow)) if (k !== 'nodePublicKey') lines.push(`  ${k}: ${v}`);
    }
    if (r.nodeKey) {
      lines.push(`Node key for sealed site-config files (in the row as nodePublicKey; seal files to it with sno-reconfigure seal): ${r.nodeKey.fingerprint}`);
      lines.push(r.nodeKey.publicKeyPem.trimEnd());
    }
    lines.push(`To undo at the factory: rm ${KUBELET_HOLD_FILE} ${BASELINE_FILE} && systemctl disable sno-reconfigure.service`);
  }
  return `${lines.join('\n')}\n`;
}

export const prepareCommand: Command = {
  name: 'prepare',
  summary: PREPARE_SUMMARY,
  help: `Usage: sno-reconfigure prepare [options]

Run on the node at the factory, after the sno-reconfigure MachineConfig has rolled out and the cluster has
been validated, right before shutting the node down for shipping.

Checks that the cluster is healthy (ClusterVersion Available, no degraded operator, one Ready node, the
MachineConfigPool updated), that kubelet's certificates outlive the shipment and its bootstrap kubeconfig
is there, and that the agent is installed. Then keeps kubelet down at the next boot
(${KUBELET_HOLD_FILE}: systemctl cannot mask the MCO's kubelet.service, a file in /etc), enables
sno-reconfigure.service, saves the Node image archive (podman runtime) and records the factory baseline
in ${BASELINE_FILE}. Refuses, changing nothing, when a check fails.

Its last action writes this node's row of the fleet inventory to ${INVENTORY_ROW_FILE} (a YAML list of one
row; --json: "inventoryRow"), which \`media build --nodes\` joins to the site rows by serial number: serialNumber,
systemUUID, macAddress (the uplink: the default route's interface), clusterName and hostname (a site-config must
keep them), installedDomain, openshiftVersion, nodePublicKey (PEM) and nodeKeyFingerprint, shipBy.

Options:
${NODE_OPTIONS_HELP}
  --role ROLE                 MachineConfigPool of the node (default master)
  --min-cert-validity DUR     how long kubelet's certificates must still be valid: the shipping time
                              (default 7d; e.g. 14d, 72h). OpenShift signs them for 30 days and kubelet
                              renews them after 21-27, so 30d could never pass; certificates that expire
                              in transit are renewed at the site through the bootstrap kubeconfig.
  --admin-kubeconfig FILE     a long-lived admin kubeconfig (the installer's auth/kubeconfig) for the site's
                              hand-off; stored in ${FACTORY_ADMIN_KUBECONFIG} (0600), never printed
  --dry-run                   run the checks and show what would be done, change nothing
  --json                      machine-readable result

Exit status: 0 prepared (or a dry run whose checks pass), 1 refused or failed, 2 usage.
`,
  options: {
    ...NODE_OPTIONS,
    role: { type: 'string' },
    'min-cert-validity': { type: 'string' },
    'admin-kubeconfig': { type: 'string' },
    'dry-run': { type: 'boolean' },
    json: { type: 'boolean' },
  },
  async run(args, io) {
    const host = hostFrom(args, io);
    const minCertValidityMs = parseValidity(stringOpt(args, 'min-cert-validity') ?? DEFAULT_MIN_CERT_VALIDITY);
    const kubeconfig = kubeconfigFrom(args);
    let client: ClosableClusterClient | undefined;
    let result: PrepareResult;
    try {
      const adminKubeconfig = await readAdminKubeconfig(stringOpt(args, 'admin-kubeconfig'), io);
      result = await prepare({
        host,
        cluster: async () => {
          if (!(await host.exists(kubeconfig))) throw new Error(`no kubeconfig at ${kubeconfig} (under ${host.root})`);
          client = createClusterClient(await loadKubeconfig((p) => host.readFile(p), kubeconfig), { timeoutMs: 15_000 });
          return client;
        },
        role: stringOpt(args, 'role') ?? 'master',
        minCertValidityMs,
        stateDir: stateDirFrom(args),
        dryRun: boolOpt(args, 'dry-run'),
        now: Date.now,
        version: VERSION,
        kubeconfig,
        ...(adminKubeconfig ? { adminKubeconfig } : {}),
      });
    } catch (e) {
      io.err(`sno-reconfigure prepare: ${(e as Error).message}\n`);
      return EXIT_FAILURE;
    } finally {
      client?.close();
    }
    io.out(boolOpt(args, 'json') ? `${JSON.stringify(result, null, 2)}\n` : renderPrepare(result));
    return result.ok ? EXIT_OK : EXIT_FAILURE;
  },
};
