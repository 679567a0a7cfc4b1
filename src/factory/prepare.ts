// `sno-reconfigure prepare` (DESIGN.md section 3): the last step at the factory. Preflight (./preflight), then
// arm the node: keep kubelet down at the next boot (the hold file), enable the agent, make sure the podman
// runtime's image survives in an archive, and record the factory baseline the agent compares against.
// Every action is idempotent: running prepare again after a power cut finishes the job.
import type { ClusterClient } from '../cluster/types';
import { R } from '../cluster/resources';
import { MASTER_POOL, mcpBaseline, readBaseline, type MachineConfigPool } from '../steps/rollouts';
import { poolBlockers } from '../steps/settle/conditions';
import type { Host } from '../host/host';
import { agentUnits, systemctl } from '../host/systemctl';
import { StepError } from '../engine/step';
import { factoryKeysAtPrepare } from '../steps/ssh-key';
import { factoryPasswordAtPrepare } from '../steps/kubeadmin';
import { factoryMachineConfigsAtPrepare } from '../steps/factory-machineconfigs';
import { earlyKeysLeft, removeEarlyKeys } from '../steps/ssh-early';
import { BASELINE_FILE, DEFAULT_DROP_DIR, DONE_MARKER, RENEW_TIMER, FACTORY_ADMIN_KUBECONFIG, INVENTORY_ROW_FILE, NODE_KEY_FILE, NODE_PUBLIC_KEY_FILE, STATE_FILES } from '../paths';
import { generateNodeKeyPair, publicKeyOf, SealedFileError } from '../siteconfig/sealed';
import { mediaTrustLine, readMediaTrust } from '../siteconfig/signature';
import { createHash } from 'node:crypto';
import { nodeInventoryRow, type NodeInventoryRow } from './inventory-row';
import { checkAdminKubeconfig, type AdminKubeconfigInput } from './admin-kubeconfig';
import { planLocalDns, writeLocalDnsRecords } from './local-dns';
import { NODE_IMAGE_ID_SUFFIX, NODE_IMAGE_SHA256_SUFFIX, PULL_AUTHFILE } from '../render/layout';
import { KUBELET_HOLD_FILE } from '../paths';
import { checkAgentCredential, checkCluster, checkInstall, checkInternalAddresses, type AgentCredentialFacts, checkKubeletCerts, type CertFacts, type Check, type ClusterFacts, type InstallFacts } from './preflight';
import { emitYaml } from '../util/yaml';
import { closeLastIssued, readLastIssued } from '../engine/last-issued';
import type { LastIssued } from '../siteconfig/validation/context';
import { relocationRecords } from '../engine/relocation-end';

export interface PrepareOptions {
  host: Host;
  /** Created on demand, so an unreadable kubeconfig is reported like any failed check. */
  cluster: () => Promise<ClusterClient>;
  role: string;
  minCertValidityMs: number;
  stateDir: string;
  dryRun: boolean;
  now: () => number;
  version: string;
  /** The agent's node-local kubeconfig (node path): its credential's lifetime counts in the ship-by date. */
  kubeconfig?: string;
  /** `--admin-kubeconfig FILE`: stored for the site's hand-off (never printed). */
  adminKubeconfig?: AdminKubeconfigInput;
}

export interface PrepareAction {
  id: string;
  description: string;
  apply(): Promise<void>;
}

export interface Baseline {
  preparedAt: string;
  agentVersion: string;
  clusterName: string;
  baseDomain: string;
  nodeName?: string;
  nodeAddresses: string[];
  internalAddresses: string[];
  openshiftVersion?: string;
  clusterID?: string;
  infrastructureName?: string;
  platform?: string;
  apiServerURL?: string;
  /** kube-system's and kube-system/kubeadmin's creation (ISO 8601): whether a kubeadmin hash could still work. */
  kubeadmin?: { kubeSystemCreated: string; secretCreated?: string };
  runtime: 'host' | 'podman';
  nodeImage?: string;
  kubeletCertificates: CertFacts;
  agentCredential?: AgentCredentialFacts;
}

export interface PrepareResult {
  /** The node's public key for sealed site-config files, for the factory's inventory (absent in a dry run that would create it). */
  nodeKey?: { publicKeyPem: string; fingerprint: string };
  ok: boolean;
  dryRun: boolean;
  checks: Check[];
  /** What was done (or, in a dry run or after a refusal, what would be done). */
  actions: { id: string; description: string; done: boolean }[];
  baseline?: Baseline;
  /** Earliest expiry of kubelet's and the agent's certificates: the node should be powered on at its site before then. */
  shipBy?: string;
  /** This node's row of the fleet inventory (also written to INVENTORY_ROW_FILE): `media build --nodes` takes it as it is. */
  inventoryRow?: NodeInventoryRow;
}

/**
 * The podman runtime's Node image: pulled if needed, saved to its archive with its image ID and the archive's
 * sha256 beside it (the launcher checks that before `podman load`, so a damaged archive is reported as such).
 */
export async function nodeImageActions(host: Host, install: InstallFacts, checks: Check[]): Promise<PrepareAction[]> {
  const settings = install.podman;
  if (!settings) return [];
  const idFile = `${settings.archive}${NODE_IMAGE_ID_SUFFIX}`;
  const archivePresent = await host.exists(settings.archive);
  const recordedId = (await host.readTextIfExists(idFile))?.trim();
  const idValid = recordedId !== undefined && IMAGE_ID_RE.test(recordedId);
  const sha256File = `${settings.archive}${NODE_IMAGE_SHA256_SUFFIX}`;
  const sha256Recorded = SHA256_HEX_RE.test((await host.readTextIfExists(sha256File))?.trim() ?? '');
  const exists = await host.run('podman', ['image', 'exists', settings.image], { timeoutMs: 60_000 });
  if (exists.code === 127) {
    checks.push({ id: 'podman', ok: false, detail: 'podman is not available on this node', remedy: 'The podman runtime needs podman on the host (RHCOS has it).' });
    return [];
  }
  const imagePresent = exists.code === 0;
  checks.push({
    id: 'node-image',
    ok: true,
    detail: `Node image ${settings.image}: ${imagePresent ? 'in local storage' : 'not in local storage'}; archive ${settings.archive} ${archivePresent ? 'present' : 'missing'}${idValid ? `, image ID ${recordedId.slice(0, 12)}` : ''}`,
  });
  if (archivePresent && idValid && sha256Recorded) return [];
  const actions: PrepareAction[] = [];
  if (!imagePresent) {
    actions.push({
      id: 'pull-node-image',
      description: `podman pull --authfile ${PULL_AUTHFILE} ${settings.image}`,
      apply: async () => {
        await host.runChecked('podman', ['pull', '--authfile', host.toolPath(PULL_AUTHFILE), settings.image], { timeoutMs: 30 * 60_000, shown: `podman pull ${settings.image}` });
      },
    });
  }
  actions.push({
    id: 'save-node-image',
    description: `podman save --format docker-archive -o ${settings.archive} ${settings.image}, its image ID to ${idFile} and its sha256 to ${sha256File} (survives image GC and crio-wipe)`,
    apply: async () => {
      const inspect = await host.runChecked('podman', ['image', 'inspect', '--format', '{{.Id}}', settings.image], { timeoutMs: 60_000, shown: `podman image inspect ${settings.image}` });
      const id = inspect.stdout.trim();
      if (!IMAGE_ID_RE.test(id)) throw new Error(`podman image inspect ${settings.image} gave no image ID (it printed: ${id.slice(0, 80) || 'nothing'})`);
      await host.mkdirp(settings.archive.replace(/\/[^/]+$/, ''), 0o700);
      const partial = `${settings.archive}.partial`;
      await host.remove(partial);
      await host.runChecked('podman', ['save', '--format', 'docker-archive', '-o', host.toolPath(partial), settings.image], { timeoutMs: 30 * 60_000, shown: `podman save ${settings.image}` });
      // Into place only when complete (fsync + rename): a power cut never leaves a truncated archive under its name.
      const archive = await host.readFile(partial);
      await host.writeFileAtomic(settings.archive, archive, 0o600);
      await host.remove(partial);
      await host.writeFileAtomic(idFile, `${id}\n`, 0o600);
      await host.writeFileAtomic(sha256File, `${createHash('sha256').update(archive).digest('hex')}\n`, 0o600);
    },
  });
  return actions;
}

/** podman's image ID: the sha256 of the image config, 64 hex digits. */
const IMAGE_ID_RE = /^[0-9a-f]{64}$/;
const SHA256_HEX_RE = /^[0-9a-f]{64}$/;

function earliest(certs: CertFacts, agentNotAfter: string | undefined): string | undefined {
  const all = [certs.client?.notAfter, certs.server?.notAfter, agentNotAfter].filter((x): x is string => Boolean(x)).sort();
  return all[0];
}

/**
 * RHCOS 4.12 and 4.13 ship no nmstatectl (openshift/os, release-4.12/4.13 manifests: no nmstate package; the MCO of
 * 4.13 runs nmstatectl from its own image, machine-config-operator release-4.13). The site network needs it at the
 * site: refused here, at the factory, with the release named, unless an nmstatectl is installed and runs.
 */
export async function checkNmstatectl(host: Host, openshiftVersion: string | undefined): Promise<Check | undefined> {
  const m = /^4\.(\d+)\./.exec(openshiftVersion ?? '');
  if (!m || Number(m[1]) >= 14) return undefined;
  const res = await host.run('nmstatectl', ['--version'], { timeoutMs: 30_000 }).catch(() => undefined);
  const ok = res?.code === 0;
  return {
    id: 'nmstatectl',
    ok,
    detail: ok ? `OpenShift ${openshiftVersion}: nmstatectl is installed (${res!.stdout.trim() || 'it runs'})` : `OpenShift ${openshiftVersion} ships no nmstatectl on RHCOS, and the site network is applied with it`,
    ...(ok ? {} : { remedy: `Ship this node on OpenShift 4.14 or later, or install nmstate on it (an image-mode layer), then prepare again. Nothing was changed.` }),
  };
}

/**
 * Re-arming for the next relocation leaves nothing of the last one that the next site could be given (the tenth hostile
 * re-test of issue 36: the drop directory's file was applied again at the next relocation, the same signed stick was
 * taken again, and a route came back from the first relocation's backup): the last signed config's moment is closed,
 * the files left in the drop directory go (the relocation's records go with the journal, in prepare), and the backups
 * are kept aside under a dated name, the next run taking its own.
 */
async function nextRelocationActions(host: Host, stateDir: string, now: number, last: LastIssued | undefined): Promise<PrepareAction[]> {
  const actions: PrepareAction[] = [];
  if (last !== undefined && 'issued' in last && !last.finished) {
    actions.push({ id: 'close-last-issued', description: `mark the last signed site-config (issued ${last.issued}) finished in ${stateDir}/${STATE_FILES.lastIssued}: the same media are refused at the next site, like older ones`, apply: async () => void (await closeLastIssued(host, stateDir)) });
  }
  const left = (await host.stat(DEFAULT_DROP_DIR))?.kind === 'directory' ? await host.listDir(DEFAULT_DROP_DIR) : [];
  if (left.length > 0) {
    actions.push({ id: 'clear-drop-dir', description: `remove what the last relocation left in the drop directory ${DEFAULT_DROP_DIR} (${left.length} ${left.length === 1 ? 'entry' : 'entries'}): the next site would be given it`, apply: async () => { for (const name of left) await host.remove(`${DEFAULT_DROP_DIR}/${name}`); } });
  }
  const backups = `${stateDir}/${STATE_FILES.backups}`;
  if ((await host.stat(backups)) !== undefined) {
    const stamp = `${backups}-before-${new Date(now).toISOString().replace(/[-:]|\.\d+/g, '')}`;
    // A second prepare within the same second, or a name already taken: the first free one.
    let aside = stamp;
    for (let n = 2; (await host.stat(aside)) !== undefined; n++) aside = `${stamp}-${n}`;
    actions.push({ id: 'keep-backups-aside', description: `keep the last relocation's backups as ${aside}: the next run saves the cluster and network as they are then`, apply: () => host.rename(backups, aside) });
  }
  return actions;
}

/**
 * The logins the last site was given, taken back (the fifteenth hostile re-test of issue 36: after prepare, store A's
 * SSH key, its early keys and its renewal timer were all still there at store B until B's run got to its end): core's
 * SSH keys and kubeadmin's password back to the factory's — recorded here when nothing was recorded yet
 * (src/steps/factory-record.ts) —, early SSH keys a run left behind removed, the renewal timer off.
 */
async function factoryLoginActions(host: Host, stateDir: string, client: ClusterClient, checks: Check[], relocatedBefore: boolean): Promise<PrepareAction[]> {
  const actions: PrepareAction[] = [];
  for (const [id, plan] of [['ssh-keys', factoryKeysAtPrepare], ['kubeadmin-password', factoryPasswordAtPrepare], ['machineconfigs', factoryMachineConfigsAtPrepare]] as const) {
    try {
      const action = await plan(host, stateDir, client);
      if (!action) continue;
      if (action.rollsOut) {
        // The keys reach the node's disk when the pool has rolled them out: shut down before, the last site's key would
        // log in at the next site until its run gets kubelet up (the sixteenth hostile re-test of issue 36).
        actions.push({ id, description: `${action.description}; prepare waits until the pool ${MASTER_POOL} has rolled them out`, apply: () => rolledOut(client, action.apply) });
      } else {
        // A record made now on a node that was relocated before takes what the last site left as the factory's: said.
        const note = relocatedBefore && action.description.startsWith('record') ? ' (this node was relocated before: check that the cluster holds only the factory\'s first, or they include the last site\'s)' : '';
        actions.push({ id, description: `${action.description}${note}`, apply: action.apply });
      }
    } catch (e) {
      checks.push(e instanceof StepError ? { id, ok: false, detail: e.message, remedy: e.office ?? e.remedy } : { id, ok: false, detail: `cannot read what the cluster holds for it: ${(e as Error).message}`, remedy: 'Check that the API is up, then run prepare again.' });
    }
  }
  if (await earlyKeysLeft(host)) actions.push({ id: 'early-ssh-keys', description: "remove the early SSH keys of core a run left behind: they would log in at the next site", apply: async () => void (await removeEarlyKeys(host)) });
  // Enabled is its link in timers.target.wants (its [Install]), for good or for this boot: read, not asked of systemctl,
  // so that a prepare that refuses has run nothing.
  const wants = ['/etc', '/run'].map((d) => `${d}/systemd/system/timers.target.wants/${RENEW_TIMER}`);
  if ((await Promise.all(wants.map((w) => host.stat(w)))).some((st) => st !== undefined)) {
    actions.push({ id: 'renewal-timer-off', description: `systemctl disable --now ${RENEW_TIMER} (the last site's choice)`, apply: async () => void (await systemctl(host, ['disable', '--now', RENEW_TIMER], 60_000)) });
  }
  return actions;
}

/** `change`, then the pool's rollout of it: a new rendered config (its baseline moved), rolled out as settle judges it. */
async function rolledOut(client: ClusterClient, change: () => Promise<void>): Promise<void> {
  const target = { kind: 'machineconfigpool', name: MASTER_POOL } as const;
  const before = await readBaseline(client, target);
  await change();
  for (const deadline = Date.now() + POOL_ROLLOUT_MS; ; await new Promise((resolve) => setTimeout(resolve, 3_000))) {
    const pool = await client.get<MachineConfigPool>(R.machineConfigPools, MASTER_POOL);
    if (mcpBaseline(pool) !== before && poolBlockers(pool).length === 0) return;
    if (Date.now() > deadline) throw new Error(`the pool ${MASTER_POOL} did not roll out within ${POOL_ROLLOUT_MS / 60_000} minutes (oc get mcp ${MASTER_POOL})`);
  }
}
/** An SSH key change needs no drain or reboot: minutes on a healthy node. */
const POOL_ROLLOUT_MS = 20 * 60_000;

export async function prepare(opts: PrepareOptions): Promise<PrepareResult> {
  const { host } = opts;
  const checks: Check[] = [];
  let facts: ClusterFacts | undefined;
  let client: ClusterClient | undefined;
  try {
    client = await opts.cluster();
    const res = await checkCluster(client, opts.role);
    checks.push(...res.checks);
    facts = res.facts;
  } catch (e) {
    checks.push({ id: 'api', ok: false, detail: `cannot query the cluster: ${(e as Error).message}`, remedy: 'Check --kubeconfig (default: the node-local localhost.kubeconfig) and that the API is up.' });
  }
  const certs = await checkKubeletCerts(host, opts.now(), opts.minCertValidityMs, facts?.nodeName);
  checks.push(...certs.checks);
  const install = await checkInstall(host);
  checks.push(...install.checks);
  const internalIp = facts && checkInternalAddresses(install.install.internalAddresses, facts);
  if (internalIp) checks.push(internalIp);
  const credential = opts.kubeconfig ? await checkAgentCredential(host, opts.kubeconfig, opts.now(), opts.minCertValidityMs) : undefined;
  if (credential) checks.push(credential.check);
  const localDns = facts ? await planLocalDns(host, facts, install.install.internalAddresses) : undefined;
  if (localDns) checks.push(localDns.check);
  const nmstate = await checkNmstatectl(host, facts?.openshiftVersion);
  if (nmstate) checks.push(nmstate);
  const admin = await checkAdminKubeconfig(host, opts.adminKubeconfig, opts.now(), opts.minCertValidityMs);
  checks.push(admin.check);
  const lastIssued = await readLastIssued(host, opts.stateDir);
  if (lastIssued !== undefined && 'damaged' in lastIssued) {
    // Not shipped so: at the site every signed config would be refused until someone deals with it (the eleventh hostile re-test of issue 36).
    const file = `${opts.stateDir}/${STATE_FILES.lastIssued}`;
    checks.push({ id: 'last-issued', ok: false, detail: `the record of the last signed site-config this node took (${file}) ${lastIssued.damaged}: at the site every signed config would be refused`, remedy: `If the office issued nothing newer for this node than the last config it applied, move the record aside (mv ${file} ${file}.bad) and run prepare again.` });
  }
  const media = await readMediaTrust(host);
  // Signed media are the default (DESIGN.md section 3): a node that records neither keys nor the factory's choice is not shipped.
  checks.push({
    id: 'site-config-media',
    ok: media.signed || media.chosen,
    detail: mediaTrustLine(media),
    ...(media.signed || media.chosen ? {} : { remedy: 'Render the MachineConfig again with --trusted-key PEMFILE (or --allow-unsigned-media), apply it and let the MCO roll it out.' }),
  });

  const actions: PrepareAction[] = [];
  if (await host.exists(DONE_MARKER)) {
    actions.push({ id: 'clear-done-marker', description: `remove ${DONE_MARKER} (left by an earlier relocation; the agent would never start)`, apply: () => host.remove(DONE_MARKER) });
  }
  // And the last relocation's records (relocation-end.ts): an attempt left in flight at the factory would make the
  // site's first boot restore it; the network committed last would have the next site's, the same on paper (a DHCP
  // template), skipped as in place (the eleventh hostile re-test of issue 36); a renamed-in file would be taken again.
  // Its report and the kubeconfig for its API name go too: status showed the last store's outcome at the next, and the
  // kubeconfig is a credential for a name the node no longer has (the fourteenth re-test).
  const lastRun = [STATE_FILES.journal, STATE_FILES.siteConfigCopy, STATE_FILES.report, STATE_FILES.kubeconfig].map((f) => `${opts.stateDir}/${f}`);
  for (const p of [...lastRun, ...relocationRecords(opts.stateDir)]) {
    if ((await host.stat(p)) !== undefined) actions.push({ id: `clear-${p.slice(p.lastIndexOf('/') + 1)}`, description: `remove ${p} (the last relocation's state: the next site must start from nothing of it)`, apply: () => host.remove(p) });
  }
  actions.push(...(await nextRelocationActions(host, opts.stateDir, opts.now(), lastIssued)));
  // Only once the cluster answered its checks: with the API down its check says so, and nothing else is asked of it.
  // Relocated before: a signed config's record, or a run's done marker or journal, which the actions above clear (the
  // seventeenth re-test: a node on unsigned media has no last-issued record).
  const relocatedBefore = lastIssued !== undefined || actions.some((a) => a.id === 'clear-done-marker' || a.id === `clear-${STATE_FILES.journal}`);
  if (client && facts) actions.push(...(await factoryLoginActions(host, opts.stateDir, client, checks, relocatedBefore)));
  actions.push(...(await nodeImageActions(host, install.install, checks)));
  const records = localDns?.records;
  if (records) {
    actions.push({ id: 'local-dns-records', description: `write ${records.file}: the node answers for its installed names itself, whatever the site's DNS knows`, apply: () => writeLocalDnsRecords(host, records) });
  }
  const nodeKey = await nodeKeyPlan(host);
  if (nodeKey.action) actions.push(nodeKey.action);
  const adminBytes = admin.store;
  if (adminBytes) {
    actions.push({ id: 'store-admin-kubeconfig', description: `store the admin kubeconfig in ${FACTORY_ADMIN_KUBECONFIG} (mode 0600): the site's hand-off kubeconfig uses it`, apply: () => host.writeFileAtomic(FACTORY_ADMIN_KUBECONFIG, adminBytes, 0o600) });
  }

  const baseline: Baseline | undefined = facts
    ? {
        preparedAt: new Date(opts.now()).toISOString(),
        agentVersion: opts.version,
        clusterName: facts.clusterName,
        baseDomain: facts.baseDomain,
        ...(facts.nodeName ? { nodeName: facts.nodeName } : {}),
        nodeAddresses: facts.nodeAddresses,
        internalAddresses: install.install.internalAddresses,
        ...(facts.openshiftVersion ? { openshiftVersion: facts.openshiftVersion } : {}),
        ...(facts.clusterID ? { clusterID: facts.clusterID } : {}),
        ...(facts.infrastructureName ? { infrastructureName: facts.infrastructureName } : {}),
        ...(facts.platform ? { platform: facts.platform } : {}),
        ...(facts.apiServerURL ? { apiServerURL: facts.apiServerURL } : {}),
        ...(facts.kubeadmin ? { kubeadmin: facts.kubeadmin } : {}),
        runtime: install.install.runtime,
        ...(install.install.podman ? { nodeImage: install.install.podman.image } : {}),
        kubeletCertificates: certs.certs,
        ...(credential ? { agentCredential: credential.facts } : {}),
      }
    : undefined;
  if (baseline) {
    actions.push({ id: 'baseline', description: `record the factory baseline in ${BASELINE_FILE}`, apply: () => host.writeFileAtomic(BASELINE_FILE, `${JSON.stringify(baseline, null, 2)}\n`, 0o644) });
  }
  // The early network phase (src/network/early.ts) is armed with the agent: before prepare it has nothing to do.
  const units = await agentUnits(host);
  actions.push({
    id: 'enable-agent',
    description: `systemctl enable ${units.join(' ')}`,
    apply: async () => {
      await systemctl(host, ['enable', ...units], 60_000);
    },
  });
  actions.push({
    id: 'hold-kubelet',
    description: `create ${KUBELET_HOLD_FILE}: kubelet stays down at the next boot until the agent has applied the site network`,
    apply: () => host.writeFileAtomic(KUBELET_HOLD_FILE, `held by sno-reconfigure prepare at ${new Date(opts.now()).toISOString()}; the agent removes this file when it starts kubelet\n`, 0o644),
  });

  const ok = checks.every((c) => c.ok);
  const shipBy = earliest(certs.certs, credential?.facts.notAfter);
  const key = nodeKey.key && !(opts.dryRun && nodeKey.action?.id === 'node-key') ? nodeKey.key : undefined;
  const inventoryRow = facts
    ? await nodeInventoryRow(host, { clusterName: facts.clusterName, hostname: facts.nodeName, installedDomain: facts.baseDomain, openshiftVersion: facts.openshiftVersion, nodePublicKey: key?.publicKeyPem, nodeKeyFingerprint: key?.fingerprint, shipBy })
    : undefined;
  if (inventoryRow) actions.push({ id: 'inventory-row', description: `write this node's inventory row to ${INVENTORY_ROW_FILE} (for media build --nodes)`, apply: () => host.writeFileAtomic(INVENTORY_ROW_FILE, emitYaml([inventoryRow]), 0o644) });
  const result: PrepareResult = { ok, dryRun: opts.dryRun, checks, actions: actions.map((a) => ({ id: a.id, description: a.description, done: false })), ...(baseline ? { baseline } : {}), ...(shipBy ? { shipBy } : {}), ...(key ? { nodeKey: key } : {}), ...(inventoryRow ? { inventoryRow } : {}) };
  if (!ok || opts.dryRun) return result;
  for (const [i, action] of actions.entries()) {
    try {
      await action.apply();
    } catch (e) {
      // In words, with where it stopped: the actions before it are done, and each is skipped when prepare runs again.
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === 'EBUSY' ? 'a filesystem is mounted there: unmount it' : code ? `the system answered ${code}` : (e as Error).message;
      throw new Error(`prepare stopped: it could not ${action.description} (${why}); what it did before is kept; fix the cause and run prepare again`, { cause: e });
    }
    const entry = result.actions[i];
    if (entry) entry.done = true;
  }
  return result;
}

/**
 * The node's own key for sealed site-config files (src/siteconfig/sealed.ts): made once, kept ever after — a
 * second prepare must not make the files already sealed to this node unreadable. The private key is 0600 and
 * never printed; the public key is printed and kept beside it for the inventory.
 */
async function nodeKeyPlan(host: Host): Promise<{ action?: PrepareAction; key?: { publicKeyPem: string; fingerprint: string } }> {
  let existing: string | undefined;
  try {
    existing = await host.readText(NODE_KEY_FILE);
  } catch {
    existing = undefined;
  }
  if (existing !== undefined) {
    let key: { publicKeyPem: string; fingerprint: string };
    try {
      key = publicKeyOf(existing);
    } catch (e) {
      if (!(e instanceof SealedFileError)) throw e;
      // Never replaced silently: files already sealed to the old key would become unreadable without a word.
      throw new Error(`the node key ${NODE_KEY_FILE} is damaged (it is not an X25519 private key), so files sealed to this node cannot be opened. If the node key was recorded when this node was prepared, put it back; otherwise remove ${NODE_KEY_FILE} and ${NODE_PUBLIC_KEY_FILE}, run prepare again, and seal the site-config's files to the new key it prints.`, { cause: e });
    }
    if (await host.exists(NODE_PUBLIC_KEY_FILE)) return { key };
    return { key, action: { id: 'node-public-key', description: `write ${NODE_PUBLIC_KEY_FILE} (the public half of the node key kept in ${NODE_KEY_FILE})`, apply: () => host.writeFileAtomic(NODE_PUBLIC_KEY_FILE, key.publicKeyPem, 0o644) } };
  }
  const pair = generateNodeKeyPair();
  return {
    key: { publicKeyPem: pair.publicKeyPem, fingerprint: pair.fingerprint },
    action: {
      id: 'node-key',
      description: `create the node key for sealed site-config files: ${NODE_KEY_FILE} (private, 0600) and ${NODE_PUBLIC_KEY_FILE}`,
      apply: async () => {
        await host.writeFileAtomic(NODE_KEY_FILE, pair.privateKeyPem, 0o600);
        await host.writeFileAtomic(NODE_PUBLIC_KEY_FILE, pair.publicKeyPem, 0o644);
      },
    },
  };
}
