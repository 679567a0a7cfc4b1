// The run's outcome where fleet tools already look: a ConfigMap in the cluster (sno-reconfigure/report)
// beside the node's report.json, which stays the source of truth. ACM configuration policies and GitOps health
// checks read ConfigMaps; nobody at a fleet's centre reads a node's /var/lib. The ConfigMap is derived from the
// same Report the node writes (buildReport), never built a second way, and holds nothing secret: the Report
// carries names, digests, dates and paths only.
//
// Written with the agent's own credential, riding out the API's bumpy first minutes for a bounded time; a
// write that does not get through is a warning, never a failed run (the node's report still says it all).
import { createOrUpdate, MANAGED_BY, MANAGED_BY_LABEL } from '../cluster/objects';
import { isTransient } from '../cluster/retry';
import { R } from '../cluster/resources';
import type { ClusterClient, KubeObject } from '../cluster/types';
import type { Logger } from '../log';
import { retryOn, type Backoff, type Timer } from '../util/backoff';
import { VERSION } from '../version';
import type { Report } from './report';

// Not under openshift-: that prefix is OpenShift's own (its projects refuse it, and its components own those
// namespaces). Earlier agents (issue 19) wrote openshift-sno-reconfigure/report; where such a ConfigMap of ours is
// still there it is kept up to date too, so a fleet policy that reads it keeps reading the truth.
export const FLEET_REPORT = { namespace: 'sno-reconfigure', name: 'report' } as const;
export const LEGACY_FLEET_REPORT_NAMESPACE = 'openshift-sno-reconfigure';

/** The label fleet tools can select on without reading the data (`oc get cm -A -l sno-reconfigure.io/result=failed`). */
export const RESULT_LABEL = 'sno-reconfigure.io/result';

/** `refused`: the site-config was judged wrong during the run (e.g. nmstate refused its network). */
export type FleetResult = 'succeeded' | 'failed' | 'refused';

/**
 * A ConfigMap holds at most 1 MiB of data (k8s.io/kubernetes pkg/apis/core/validation ValidateConfigMap,
 * totalSize > core.MaxSecretSize). The report stays far below that; a run with an unusual number of changes
 * keeps the first ones and says how many were left out, rather than failing the write.
 */
const REPORT_JSON_LIMIT = 512 * 1024;

function reportJson(report: Report): string {
  const full = JSON.stringify(report, null, 2);
  if (full.length <= REPORT_JSON_LIMIT) return full;
  let keep = report.changes.length;
  let text = full;
  while (text.length > REPORT_JSON_LIMIT && keep > 0) {
    keep = Math.floor(keep / 2);
    text = JSON.stringify({ ...report, changes: report.changes.slice(0, keep), changesLeftOut: report.changes.length - keep }, null, 2);
  }
  return text;
}

/** The Namespace and the ConfigMap for one outcome. Pure: tests hold them to the Kubernetes schema. */
export function fleetReportObjects(report: Report, result: FleetResult, now: Date): { namespace: KubeObject; configMap: KubeObject } {
  const labels = { [MANAGED_BY_LABEL]: MANAGED_BY };
  const soonest = [...(report.certificates ?? [])].sort((a, b) => Date.parse(a.notAfter) - Date.parse(b.notAfter))[0];
  const data: Record<string, string> = {
    result,
    siteConfig: report.siteConfig.name ?? '',
    digest: report.siteConfig.digest ?? '',
    node: report.node.name ?? '',
    agentVersion: VERSION,
    ...(report.cluster.version ? { clusterVersion: report.cluster.version } : {}),
    ...(report.cluster.newBaseDomain ? { baseDomain: report.cluster.newBaseDomain } : {}),
    ...(report.startedAt ? { startedAt: report.startedAt } : {}),
    ...(report.finishedAt ? { finishedAt: report.finishedAt } : {}),
    updatedAt: now.toISOString(),
    ...(soonest ? { certificatesExpireFirst: soonest.notAfter } : {}),
    ...(report.lastError ? { failedStep: report.lastError.step, error: report.lastError.message, remedy: report.lastError.remedy } : {}),
    warnings: String(report.warnings.length),
    'report.json': reportJson(report),
  };
  return {
    namespace: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: FLEET_REPORT.namespace, labels } },
    configMap: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: FLEET_REPORT.name, namespace: FLEET_REPORT.namespace, labels: { ...labels, [RESULT_LABEL]: result } }, data },
  };
}

/** Connection errors and 5xx/429 while the API settles; 1 s doubling to 15 s, equal jitter. */
const FLEET_REPORT_BACKOFF: Backoff = { initialMs: 1_000, factor: 2, jitter: 0.5, maxMs: 15_000 };

export interface PublishRun {
  timer: Timer;
  signal: AbortSignal;
  log: Logger;
  /** How long the write may keep trying. */
  budgetMs: number;
}

/**
 * Creates or updates the report ConfigMap (and its namespace). True when it was written; false, with one
 * warning saying what is lost, when the API did not take it within the budget.
 */
export async function publishFleetReport(cluster: () => Promise<ClusterClient>, objects: { namespace: KubeObject; configMap: KubeObject }, run: PublishRun): Promise<boolean> {
  const giveUpAt = run.timer.now() + run.budgetMs;
  const where = `${FLEET_REPORT.namespace}/${FLEET_REPORT.name}`;
  try {
    await retryOn(
      FLEET_REPORT_BACKOFF,
      isTransient,
      async () => {
        const client = await cluster();
        // An existing namespace is left as it is: only its existence matters here.
        await createOrUpdate(client, R.namespaces, objects.namespace, () => undefined);
        const refresh = (current: KubeObject): KubeObject => ({ ...current, metadata: { ...current.metadata, labels: { ...current.metadata?.labels, ...objects.configMap.metadata?.labels } }, data: objects.configMap.data });
        await createOrUpdate(client, R.configMaps, objects.configMap, refresh);
        const legacy = await client.get<KubeObject>(R.configMaps, FLEET_REPORT.name, LEGACY_FLEET_REPORT_NAMESPACE);
        if (legacy?.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY) {
          await createOrUpdate(client, R.configMaps, { ...objects.configMap, metadata: { ...objects.configMap.metadata, namespace: LEGACY_FLEET_REPORT_NAMESPACE } }, refresh);
        }
      },
      { timer: run.timer, signal: run.signal, deadline: { remainingMs: () => giveUpAt - run.timer.now() } },
    );
    run.log.info(`the outcome is recorded in the cluster as ConfigMap ${where}, where fleet tools can read it`);
    return true;
  } catch (e) {
    if (run.signal.aborted) throw e;
    run.log.warn({ err: e }, `could not record the outcome in the cluster as ConfigMap ${where} (${(e as Error).message}); the fleet will not see this outcome, but the node's own report has it`);
    return false;
  }
}
