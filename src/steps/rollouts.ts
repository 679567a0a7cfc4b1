// The rollouts the cluster steps start, recorded for settle: the domain, pull-secret, mirrors and trust steps
// only write and return; settle then waits for all of them at once (total ≈ the longest, not the sum).
//
// Each record carries a baseline read just BEFORE the write: a ClusterOperator's Progressing condition
// (status@lastTransitionTime) or a MachineConfigPool's target rendered config (spec.configuration.name). A
// changed baseline proves the operator reacted to our write — without it, settle could see "not Progressing"
// in the seconds before an operator notices the change and call the cluster settled too early. Baselines
// are cluster values, so the comparison does not depend on the node's clock.
// Records live in a state file (not in one step's data) so settle finds them after a power cut.
import * as path from 'node:path';
import { R } from '../cluster/resources';
import type { ClusterClient, KubeObject } from '../cluster/types';
import type { StepContext, StepName } from '../engine/step';
import { condition, type Condition } from '../cluster/objects';

/** What settle still waits for, as the journal, the status line and the failure text show it. */
export interface Blocker {
  /** Stable identity across evaluations (for degraded grace timing). */
  key: string;
  text: string;
  /** Set when something reports Degraded: the name and its message. */
  degraded?: { name: string; message: string };
  /** An expected rollout that has not started (baseline unchanged). */
  notStarted?: ExpectedRollout;
}

export const ROLLOUTS_FILE = 'rollouts.json';
export const MASTER_POOL = 'master';

export type RolloutTarget = { kind: 'clusteroperator' | 'machineconfigpool'; name: string };

export interface ExpectedRollout extends RolloutTarget {
  id: string;
  /** What started it, e.g. "APIServer namedCertificates". */
  reason: string;
  step: StepName;
  baseline: string | null;
  /** The operator may legitimately not react (then settle does not warn). */
  optional?: boolean;
  recordedAt: string;
}

interface RolloutsFile {
  digest: string;
  rollouts: ExpectedRollout[];
}

export interface MachineConfigPool extends KubeObject {
  spec?: { configuration?: { name?: string } };
  status?: { configuration?: { name?: string }; observedGeneration?: number; machineCount?: number; updatedMachineCount?: number; degradedMachineCount?: number; conditions?: Condition[] };
}

export interface ClusterOperator extends KubeObject {
  status?: { conditions?: Condition[] };
}

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** A LabelSelector as the API's labelSelector query (apimachinery pkg/apis/meta/v1/helpers.go LabelSelectorAsSelector). */
export function selectorQuery(selector: LabelSelector): string {
  const expression = ({ key, operator, values }: { key: string; operator: string; values?: string[] }) =>
    operator === 'Exists' ? key : operator === 'DoesNotExist' ? `!${key}` : `${key} ${operator.toLowerCase()} (${(values ?? []).join(',')})`;
  return [...Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`), ...(selector.matchExpressions ?? []).map(expression)].join(',');
}

/**
 * The MachineConfigs the master pool merges into the node's configuration: those its machineConfigSelector selects, by
 * labels alone, whatever their names or owners (machine-config-operator release-4.14…4.16 pkg/controller/render/
 * render_controller.go getMachineConfigsForPool). Its rendered configs carry no labels.
 */
export async function poolMachineConfigs<T extends KubeObject>(client: ClusterClient): Promise<T[]> {
  const pool = await client.get<KubeObject & { spec?: { machineConfigSelector?: LabelSelector } }>(R.machineConfigPools, MASTER_POOL);
  const selector = selectorQuery(pool?.spec?.machineConfigSelector ?? { matchLabels: { 'machineconfiguration.openshift.io/role': MASTER_POOL } });
  return (await client.list<T>(R.machineConfigs, { labelSelector: selector })).items;
}

export const rolloutId = (t: RolloutTarget): string => `${t.kind === 'clusteroperator' ? 'co' : 'mcp'}/${t.name}`;

export function coBaseline(co: ClusterOperator | undefined): string | null {
  const p = condition(co, 'Progressing');
  return p ? `${p.status ?? ''}@${p.lastTransitionTime ?? ''}` : null;
}

export function mcpBaseline(pool: MachineConfigPool | undefined): string | null {
  return pool?.spec?.configuration?.name ?? null;
}

export async function readBaseline(client: ClusterClient, t: RolloutTarget): Promise<string | null> {
  return t.kind === 'clusteroperator' ? coBaseline(await client.get<ClusterOperator>(R.clusterOperators, t.name)) : mcpBaseline(await client.get<MachineConfigPool>(R.machineConfigPools, t.name));
}

function filePath(ctx: StepContext): string {
  return path.posix.join(ctx.stateDir, ROLLOUTS_FILE);
}

/** The rollouts recorded for this site-config (records of another config's run are ignored). */
export async function readRollouts(ctx: StepContext): Promise<ExpectedRollout[]> {
  const text = await ctx.host.readTextIfExists(filePath(ctx));
  if (!text) return [];
  try {
    const file = JSON.parse(text) as RolloutsFile;
    return file.digest === ctx.site.digest && Array.isArray(file.rollouts) ? file.rollouts : [];
  } catch {
    return [];
  }
}

/**
 * Records rollouts a step is about to start. Call it before the write: the baseline must predate it. A
 * rollout already recorded for this config keeps its first (oldest) baseline.
 */
export async function recordRollouts(ctx: StepContext, client: ClusterClient, step: StepName, items: (RolloutTarget & { reason: string; optional?: boolean })[]): Promise<void> {
  if (items.length === 0) return;
  const rollouts = await readRollouts(ctx);
  let changed = false;
  for (const item of items) {
    const id = rolloutId(item);
    const existing = rollouts.find((r) => r.id === id);
    if (existing) {
      if (!existing.reason.includes(item.reason)) {
        existing.reason = `${existing.reason}, ${item.reason}`;
        changed = true;
      }
      if (existing.optional && !item.optional) {
        delete existing.optional;
        changed = true;
      }
      continue;
    }
    rollouts.push({
      id,
      kind: item.kind,
      name: item.name,
      reason: item.reason,
      step,
      baseline: await readBaseline(client, item),
      ...(item.optional ? { optional: true } : {}),
      recordedAt: new Date(ctx.clock.now()).toISOString(),
    });
    changed = true;
  }
  if (changed) {
    const file: RolloutsFile = { digest: ctx.site.digest, rollouts };
    await ctx.host.writeFileAtomic(filePath(ctx), `${JSON.stringify(file, null, 2)}\n`, 0o644);
  }
  ctx.facts.expectedRollouts = rollouts.map((r) => r.id);
}
