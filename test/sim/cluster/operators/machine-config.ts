// machine-config operator for the single master pool. Inputs that end up on the node — the global pull
// secret, ImageDigestMirrorSets / ImageTagMirrorSets / ImageContentSourcePolicies, MachineConfigs for the
// master role — are rendered into a new `rendered-master-<hash>`; pool `master` then goes Updating → Updated.
// What the node does to apply it is the MCD's post-config action (postConfigAction below). Pool updates never
// set the machine-config ClusterOperator Progressing (it only reports operator upgrades:
// machine-config-operator pkg/operator/status.go syncProgressingStatus, "Cluster version is X").
//
// image.config registry CAs (spec.additionalTrustedCA) are not rendered into the pool's config: from 4.14 the
// MCO copies them into ControllerConfig and the MCD writes /etc/docker/certs.d/<host[:port]>/ca.crt without a
// new rendered config (machine-config-operator release-4.14 pkg/operator/sync.go, pkg/daemon/certificate_writer.go;
// enhancement certificate-authorities-for-image-registries, MCO-499); 4.12/4.13 leave them to the
// image-registry operator's node-ca DaemonSet. Either way the pool does not go Updating.
import { R } from '../../../../src/cluster/resources';
import type { KubeObject } from '../../../../src/cluster/types';
import type { StoreEvent } from '../../store-types';
import type { SimContext } from '../context';
import type { OperatorRecord, RolloutRecord } from '../state';
import { sha256 } from '../x509';
import { minorVersion } from '../options';
import { RolloutOperator, type Desired, type Problem } from './base';
import { mergeConditions, type Condition, type WantedCondition } from './status';

export interface MachineConfigState {
  /** Input key (pull-secret, idms/, itms/, icsp/, mc/ and passwd/<name>) → content hash. */
  sources: Record<string, string>;
  rendered: string;
  /** What the MCD does on the node to apply this config (from the previous one). */
  action: PostConfigAction;
}

/**
 * The MCD's post-config actions (machine-config-operator release-4.12…4.16 pkg/daemon/update.go,
 * calculatePostConfigChangeAction): registries.conf → reload CRI-O; the pull secret (/var/lib/kubelet/
 * config.json) → nothing; anything else → reboot. A CRI-O reload drains the node first unless the registry
 * change is "safe" (pkg/daemon/drain.go isDrainRequired / isSafeContainerRegistryConfChanges: only new
 * digest-only mirrors or registries were added).
 */
export type PostConfigAction = 'none' | 'reload-crio' | 'drain-reload-crio' | 'reboot';

export interface NodeHooks {
  /** The node goes down for a reboot (kubelet stops, the node stops reporting). */
  halt(): void;
  /** The node is back: kubelet starts again if it is enabled. */
  boot(): void;
}

const POOL = 'master';
const MCO_ANN = 'machineconfiguration.openshift.io';
/**
 * The render controller renders a pool 5 s after the first change of a burst (machine-config-operator
 * release-4.14 pkg/controller/render/render_controller.go: renderDelay = 5 * time.Second, enqueued with AddAfter;
 * client-go's delaying queue keeps the earlier of two ready times for one key), so inputs written within those
 * seconds land in one rendered config.
 */
export const RENDER_DELAY_MS = 5_000;

export class MachineConfigOperator extends RolloutOperator<MachineConfigState> {
  readonly key = 'machine-config';
  readonly coName = 'machine-config';

  constructor(
    ctx: SimContext,
    private readonly node: NodeHooks,
  ) {
    super(ctx);
  }

  protected durationMs(): number {
    return this.ctx.opts.durations.machineConfigRollout;
  }

  private lastPaused = false;

  private paused(): boolean {
    return (this.ctx.store.get(R.machineConfigPools, POOL)?.spec as { paused?: boolean } | undefined)?.paused === true;
  }

  protected override reactionDelayMs(): number {
    return RENDER_DELAY_MS;
  }

  /**
   * A new rendered config reaches the node only when the node is not updating and the pool is not paused: the
   * node controller picks no candidate while a node is mid-update ("No nodes available for updates") and only
   * syncs status for a paused pool (release-4.14 pkg/controller/node/node_controller.go syncMachineConfigPool,
   * getAllCandidateMachines). The render controller renders meanwhile all the same (pool spec.configuration,
   * render_controller.go syncGeneratedMachineConfig), so a MachineConfig written during an update is picked up
   * by the next render and applied by a second update after the first is done — with its own reboot.
   */
  protected override mayStartRollout(desired: MachineConfigState): boolean {
    if (!this.record.target && !this.paused()) return true;
    this.ensureRendered(desired);
    this.writePoolTarget(desired);
    return false;
  }

  protected relevant(e: StoreEvent): boolean {
    const r = e.resource;
    if (r.plural === R.machineConfigPools.plural && r.group === R.machineConfigPools.group) {
      if (e.object.metadata?.name !== POOL) return false;
      // Every sync of the node controller records the pool's generation (status.go calculateStatus, also for a
      // paused pool: syncStatusOnly), so a spec change (paused) is observed even when nothing rolls out.
      const status = (e.object.status ?? {}) as { observedGeneration?: number };
      if ((status.observedGeneration ?? 0) < (e.object.metadata?.generation ?? 0)) setImmediate(() => this.safely('observe the pool', () => this.observePool()));
      const paused = (e.object.spec as { paused?: boolean } | undefined)?.paused === true;
      const changed = paused !== this.lastPaused;
      this.lastPaused = paused;
      return changed;
    }
    if (r.plural === 'secrets' && r.group === '') return e.object.metadata?.namespace === 'openshift-config' && e.object.metadata?.name === 'pull-secret';
    if (r.plural === 'configmaps' && r.group === '') return e.object.metadata?.namespace === 'openshift-config';
    // Not for a rendered config of its own (it carries no labels): a hand-made `rendered-*` or one with an owner is an
    // input like any other.
    if (r.plural === R.machineConfigs.plural && r.group === R.machineConfigs.group) return Object.keys(e.object.metadata?.labels ?? {}).length > 0;
    if (r.plural === R.proxies.plural && r.group === R.proxies.group) return true;
    return [R.imageDigestMirrorSets, R.imageTagMirrorSets, R.imageContentSourcePolicies, R.images].some((t) => t.plural === r.plural && t.group === r.group);
  }

  private listSafe(type: typeof R.imageDigestMirrorSets | typeof R.imageTagMirrorSets | typeof R.imageContentSourcePolicies | typeof R.machineConfigs): KubeObject[] {
    try {
      return this.ctx.store.list(type);
    } catch {
      // Below OpenShift 4.13 the IDMS/ITMS types do not exist in this cluster.
      return [];
    }
  }

  protected desired(): Desired<MachineConfigState> {
    const sources: Record<string, string> = {};
    const pull = this.ctx.store.get(R.secrets, 'pull-secret', 'openshift-config');
    sources['pull-secret'] = sha256(JSON.stringify(pull?.data ?? {}));
    for (const o of this.listSafe(R.imageDigestMirrorSets)) sources[`idms/${o.metadata?.name}`] = sha256(JSON.stringify(o.spec ?? {}));
    for (const o of this.listSafe(R.imageTagMirrorSets)) sources[`itms/${o.metadata?.name}`] = sha256(JSON.stringify(o.spec ?? {}));
    for (const o of this.listSafe(R.imageContentSourcePolicies)) sources[`icsp/${o.metadata?.name}`] = sha256(JSON.stringify(o.spec ?? {}));
    Object.assign(sources, registryEntries([...this.listSafe(R.imageDigestMirrorSets), ...this.listSafe(R.imageContentSourcePolicies)]));
    // The cluster proxy reaches the node through ControllerConfig.spec.proxy, which is Proxy/cluster *status* (the
    // network operator's, not the spec), rendered into /etc/mco/proxy.env and the CRI-O/kubelet proxy drop-ins;
    // the CAs go to /etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt: openshift-config/
    // user-ca-bundle plus the Proxy's trustedCA ConfigMap when it is another one (machine-config-operator
    // release-4.12…4.16 pkg/operator/render.go createDiscoveredControllerConfigSpec, pkg/operator/sync.go
    // syncRenderConfig; templates/common/_base/files/etc-mco-proxy.yaml).
    const proxy = this.ctx.store.get(R.proxies, 'cluster') as { spec?: { trustedCA?: { name?: string } }; status?: Record<string, string> } | undefined;
    if (proxy?.status && Object.keys(proxy.status).length > 0) sources['proxy/status'] = sha256(JSON.stringify(proxy.status));
    const caNames = ['user-ca-bundle', ...(proxy?.spec?.trustedCA?.name && proxy.spec.trustedCA.name !== 'user-ca-bundle' ? [proxy.spec.trustedCA.name] : [])];
    const cas = caNames.map((n) => (this.ctx.store.get(R.configMaps, n, 'openshift-config')?.data as Record<string, string> | undefined)?.['ca-bundle.crt'] ?? '').join('');
    if (cas) sources['user-ca/bundle'] = sha256(cas);
    for (const mc of this.poolMachineConfigs()) {
      const name = mc.metadata?.name ?? '';
      // passwd (core's SSH keys) apart from the rest: the MCD applies it without a reboot (postConfigAction).
      const spec = (mc.spec ?? {}) as { config?: { passwd?: unknown } };
      const { passwd, ...config } = spec.config ?? {};
      // One that holds nothing else (core's keys alone) adds nothing else to the rendered config, whose old and new
      // versions the MCD compares (pkg/daemon/update.go calculatePostConfigChangeAction): it does not reboot.
      if (!holdsOnly(spec, ['ignition', 'passwd'])) sources[`mc/${name}`] = sha256(JSON.stringify({ ...spec, config }));
      if (passwd !== undefined) sources[`passwd/${name}`] = sha256(JSON.stringify(passwd));
    }
    const sorted = Object.fromEntries(Object.entries(sources).sort(([a], [b]) => a.localeCompare(b)));
    const hash = sha256(JSON.stringify(sorted));
    const previous = this.record.target?.config as MachineConfigState | undefined ?? this.current();
    const config: MachineConfigState = { sources: sorted, rendered: `rendered-${POOL}-${hash.slice(0, 32)}`, action: previous ? postConfigAction(previous.sources, sorted, minorVersion(this.ctx.opts.version)) : 'none' };
    return { hash, config };
  }

  protected progressingCondition(): WantedCondition {
    return this.settledConditions().progressing;
  }

  protected settledConditions() {
    return {
      progressing: { status: 'False', reason: 'AsExpected', message: `Cluster version is ${this.ctx.opts.version}` } as WantedCondition,
      available: { status: 'True', reason: 'AsExpected', message: `Cluster has deployed [{operator ${this.ctx.opts.version}}]` } as WantedCondition,
    };
  }

  protected degradedCondition(problem: Problem): WantedCondition {
    return { status: 'True', reason: problem.reason, message: problem.message };
  }

  override init(): void {
    super.init();
    const current = this.current();
    if (current) this.ensureRendered(current);
    if (!this.record.target && current) {
      this.writePool(current, 'updated');
      this.writeNode(current, 'Done', false);
    }
  }

  protected override milestones(target: MachineConfigState) {
    if (target.action !== 'reboot') return [];
    const d = this.ctx.opts.durations;
    return [{ name: 'reboot', offset: d.machineConfigRollout - d.rebootOutage }];
  }

  protected override onRolloutStart(target: MachineConfigState): void {
    this.ensureRendered(target);
    this.writePool(target, 'updating');
    // The MCD cordons and drains before a reboot and before an unsafe registries change.
    this.writeNode(target, 'Working', target.action === 'reboot' || target.action === 'drain-reload-crio');
  }

  protected override onMilestone(name: string): void {
    if (name !== 'reboot') return;
    this.ctx.log('machine-config: rebooting the node to apply the new configuration');
    this.ctx.availability.block('node-reboot');
    this.node.halt();
    this.ctx.events.emit('reboot', { phase: 'down' });
  }

  protected override onResume(rollout: RolloutRecord): void {
    if (rollout.milestones.some((m) => m.name === 'reboot' && m.fired)) {
      this.ctx.availability.block('node-reboot');
      this.node.halt();
    }
  }

  protected override onRolloutDone(current: MachineConfigState): void {
    if (this.ctx.availability.downReasons().includes('node-reboot')) {
      this.ctx.availability.unblock('node-reboot');
      this.ctx.events.emit('reboot', { phase: 'up' });
      this.node.boot();
    }
    this.writeNode(current, 'Done', false);
    const next = this.desired();
    if ('hash' in next && next.config.rendered !== current.rendered) {
      // A newer render waits: the node controller hands it to the node now that the node is done.
      setImmediate(() => this.safely('reconcile', () => this.reconcile()));
      return;
    }
    this.writePool(current, 'updated');
  }

  private observePool(): void {
    const pool = this.ctx.store.get(R.machineConfigPools, POOL);
    const status = (pool?.status ?? {}) as { observedGeneration?: number };
    if (!pool || (status.observedGeneration ?? 0) >= (pool.metadata?.generation ?? 0)) return;
    pool.status = { ...status, observedGeneration: pool.metadata?.generation ?? 1 };
    this.ctx.store.updateStatus(R.machineConfigPools, pool);
  }

  /** The render controller's part alone: the pool targets `cfg` (spec.configuration); the node is not told yet. */
  private writePoolTarget(cfg: MachineConfigState): void {
    const pool = this.ctx.store.get(R.machineConfigPools, POOL);
    const spec = (pool?.spec ?? {}) as { configuration?: { name?: string } };
    if (!pool || spec.configuration?.name === cfg.rendered) return;
    pool.spec = { ...spec, configuration: { name: cfg.rendered, source: this.sourceRefs() } };
    this.ctx.store.update(R.machineConfigPools, pool);
  }

  /** The rendered MachineConfig exists (the MCO keeps old ones). */
  private ensureRendered(cfg: MachineConfigState): void {
    if (this.ctx.store.get(R.machineConfigs, cfg.rendered)) return;
    const pool = this.ctx.store.get(R.machineConfigPools, POOL);
    this.ctx.store.create(R.machineConfigs, {
      apiVersion: 'machineconfiguration.openshift.io/v1',
      kind: 'MachineConfig',
      metadata: {
        name: cfg.rendered,
        annotations: {
          [`${MCO_ANN}/generated-by-controller-version`]: `sim-${this.ctx.opts.version}`,
          [`${MCO_ANN}/release-image-version`]: this.ctx.opts.version,
        },
        ownerReferences: pool?.metadata?.uid
          ? [{ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', name: POOL, uid: pool.metadata.uid, controller: true, blockOwnerDeletion: true }]
          : undefined,
      },
      spec: { config: { ignition: { version: '3.4.0' } }, extensions: [], fips: false, kernelArguments: [], kernelType: 'default', osImageURL: '' },
    });
  }

  /**
   * The MachineConfigs the pool merges: those its machineConfigSelector selects, by labels alone, whatever their names
   * (release-4.14…4.16 pkg/controller/render/render_controller.go getMachineConfigsForPool; LabelSelectorAsSelector).
   * The rendered ones carry no labels.
   */
  private poolMachineConfigs(): KubeObject[] {
    const selector = ((this.ctx.store.get(R.machineConfigPools, POOL)?.spec ?? {}) as { machineConfigSelector?: LabelSelector }).machineConfigSelector ?? { matchLabels: { [`${MCO_ANN}/role`]: POOL } };
    return this.listSafe(R.machineConfigs).filter((mc) => selects(selector, (mc.metadata?.labels ?? {}) as Record<string, string>));
  }

  private sourceRefs(): { apiVersion: string; kind: string; name: string }[] {
    return this.poolMachineConfigs()
      .map((mc) => ({ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', name: mc.metadata!.name! }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  private writePool(cfg: MachineConfigState, phase: 'updating' | 'updated'): void {
    let pool = this.ctx.store.get(R.machineConfigPools, POOL);
    if (!pool) return;
    const configuration = { name: cfg.rendered, source: this.sourceRefs() };
    const spec = (pool.spec ?? {}) as { configuration?: { name?: string } };
    if (spec.configuration?.name !== cfg.rendered) {
      pool.spec = { ...spec, configuration };
      pool = this.ctx.store.update(R.machineConfigPools, pool);
    }
    const status = (pool.status ?? {}) as { conditions?: Condition[]; configuration?: unknown };
    const updating = phase === 'updating';
    const wanted: Record<string, WantedCondition> = {
      RenderDegraded: { status: 'False', reason: '', message: '' },
      NodeDegraded: { status: 'False', reason: '', message: '' },
      Degraded: { status: 'False', reason: '', message: '' },
      Updated: updating ? { status: 'False', reason: '', message: '' } : { status: 'True', reason: '', message: `All nodes are updated with MachineConfig ${cfg.rendered}` },
      Updating: updating ? { status: 'True', reason: '', message: `All nodes are updating to MachineConfig ${cfg.rendered}` } : { status: 'False', reason: '', message: '' },
    };
    const nextStatus = {
      ...status,
      conditions: mergeConditions(status.conditions ?? [], wanted, this.ctx.clock.iso()),
      configuration: updating ? (status.configuration ?? configuration) : configuration,
      machineCount: 1,
      updatedMachineCount: updating ? 0 : 1,
      readyMachineCount: updating ? 0 : 1,
      unavailableMachineCount: updating ? 1 : 0,
      degradedMachineCount: 0,
      observedGeneration: pool.metadata?.generation ?? 1,
    };
    if (JSON.stringify(nextStatus) === JSON.stringify(status)) return;
    pool.status = nextStatus;
    this.ctx.store.updateStatus(R.machineConfigPools, pool);
  }

  /** The node's machine-config-daemon annotations, and a cordon while an update drains it. */
  private writeNode(cfg: MachineConfigState, state: 'Working' | 'Done', cordon: boolean): void {
    const node = this.ctx.store.get(R.nodes, this.ctx.opts.nodeName);
    if (!node) return;
    const ann = { ...(node.metadata?.annotations ?? {}) };
    ann[`${MCO_ANN}/desiredConfig`] = cfg.rendered;
    if (state === 'Done') ann[`${MCO_ANN}/currentConfig`] = cfg.rendered;
    ann[`${MCO_ANN}/state`] = state;
    ann[`${MCO_ANN}/reason`] = '';
    node.metadata = { ...node.metadata, annotations: ann };
    const spec = { ...((node.spec ?? {}) as Record<string, unknown>) };
    if (cordon) spec.unschedulable = true;
    else delete spec.unschedulable;
    const before = this.ctx.store.get(R.nodes, this.ctx.opts.nodeName);
    if (JSON.stringify(before?.metadata?.annotations) === JSON.stringify(ann) && JSON.stringify(before?.spec ?? {}) === JSON.stringify(spec)) return;
    node.spec = spec;
    this.ctx.store.update(R.nodes, node);
  }

  /** What the pool is on now and whether it is updating (for the control endpoint's state). */
  poolState(): { rendered: string | undefined; updating: boolean; record: OperatorRecord } {
    return { rendered: this.current()?.rendered, updating: !!this.record.target, record: this.record };
  }
}

/**
 * registries.conf's entry per mirrored source, as far as a drain depends on it: `registry/<source>` → whether the
 * source is blocked. A source is blocked when any IDMS for it says mirrorSourcePolicy NeverContactSource (the sets
 * are merged per source: machine-config-operator release-4.14 vendor/github.com/openshift/runtime-utils
 * pkg/registries/registries.go mergedMirrorSets, EditRegistriesConfig `reg.Blocked = true`); ICSPs never block.
 */
function registryEntries(objects: readonly KubeObject[]): Record<string, string> {
  const blocked = new Map<string, boolean>();
  for (const o of objects) {
    const spec = (o.spec ?? {}) as { imageDigestMirrors?: { source?: string; mirrorSourcePolicy?: string }[]; repositoryDigestMirrors?: { source?: string }[] };
    for (const m of spec.imageDigestMirrors ?? []) if (m.source) blocked.set(m.source, (blocked.get(m.source) ?? false) || m.mirrorSourcePolicy === 'NeverContactSource');
    for (const m of spec.repositoryDigestMirrors ?? []) if (m.source) blocked.set(m.source, blocked.get(m.source) ?? false);
  }
  return Object.fromEntries([...blocked].map(([source, b]) => [`registry/${source}`, b ? 'blocked' : 'open']));
}

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** apimachinery's LabelSelector semantics: every matchLabels pair and every expression must hold. */
function selects(selector: LabelSelector, labels: Record<string, string>): boolean {
  const has = (k: string) => Object.hasOwn(labels, k);
  return Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v) && (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) =>
    operator === 'In' ? has(key) && values.includes(labels[key]!) : operator === 'NotIn' ? !has(key) || !values.includes(labels[key]!) : operator === 'Exists' ? has(key) : !has(key));
}

/** Whether a MachineConfig's spec holds nothing but empty fields and `config` entries named in `keys`. */
function holdsOnly(spec: { config?: Record<string, unknown> } & Record<string, unknown>, keys: string[]): boolean {
  const empty = (v: unknown) => v === undefined || v === null || v === '' || v === false || (Array.isArray(v) && v.length === 0);
  return Object.entries(spec).every(([k, v]) => (k === 'config' ? Object.keys(v ?? {}).every((c) => keys.includes(c)) : empty(v)));
}

/** The MCD's action for a change of the pool's inputs (see PostConfigAction). */
export function postConfigAction(before: Record<string, string>, after: Record<string, string>, minor = 16): PostConfigAction {
  let registries: 'none' | 'safe' | 'unsafe' = 'none';
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = before[key];
    const now = after[key];
    if (was === now) continue;
    const kind = key.split('/')[0];
    // The pull secret (/var/lib/kubelet/config.json) needs nothing; nor does core's sshAuthorizedKeys, the only
    // passwd field the MCD changes: passwd is not a file, and only OS image, kernel arguments, FIPS, units, kernel
    // type and extensions reboot (machine-config-operator release-4.12…4.16 pkg/daemon/update.go
    // calculatePostConfigChangeAction; updateSSHKeys writes the keys in place).
    if (kind === 'pull-secret' || kind === 'passwd') continue;
    if (kind === 'idms' || kind === 'icsp') {
      // A new IDMS/ICSP adds digest-only mirrors (safe); editing or deleting one may remove mirrors (not safe).
      if (was !== undefined) registries = 'unsafe';
      else if (registries === 'none') registries = 'safe';
    } else if (kind === 'registry') {
      // A new source is safe (its mirrors are digest-only); a source whose entry changes (blocked now, because a
      // new set says NeverContactSource for a source already mirrored) or goes away is not (pkg/daemon/drain.go
      // isSafeContainerRegistryConfChanges: "blocked value for registry … has changed", "has been removed").
      if (was !== undefined) registries = 'unsafe';
      else if (registries === 'none') registries = 'safe';
    } else if (kind === 'itms') registries = 'unsafe'; // tag mirrors are not digest-only
    // The user CA bundle file: CRI-O restarts, no drain, from 4.14 (filesPostConfigChangeActionRestartCrio);
    // before, like any other file, a reboot. The sim's CRI-O reload stands for the restart.
    else if (kind === 'user-ca' && minor >= 14) registries = registries === 'none' ? 'safe' : registries;
    else return 'reboot';
  }
  if (registries === 'unsafe') return 'drain-reload-crio';
  if (registries === 'safe') return 'reload-crio';
  // The pull secret (/var/lib/kubelet/config.json) needs nothing: kubelet and CRI-O read it per pull.
  return 'none';
}
