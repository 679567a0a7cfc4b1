// The outcome in the cluster (issue 19, "Outcome back to the fleet"): the report ConfigMap a fleet tool reads,
// written on done and on a failed run, updated on a re-run, held to the Kubernetes schema of ConfigMap and
// Namespace (kubernetes-models, generated from the Kubernetes OpenAPI: an independent judge, not our types),
// never carrying a secret, and never failing a run when the API will not take it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { ConfigMap, Namespace } from 'kubernetes-models/v1';
import { createClusterClient } from '../../../src/cluster/client';
import { loadKubeconfig } from '../../../src/cluster/kubeconfig';
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import { FLEET_REPORT, fleetReportObjects, LEGACY_FLEET_REPORT_NAMESPACE, publishFleetReport, RESULT_LABEL } from '../../../src/engine/fleet-report';
import type { Report } from '../../../src/engine/report';
import { createLogger } from '../../../src/log';
import { realTimer } from '../../../src/util/backoff';
import { demoSiteConfigFiles, signedSiteConfigFiles, siteConfigFor, startScenario, type Scenario } from '../../support/scenario';
import { startSimulator } from '../../sim';

async function withScenario(fn: (s: Scenario) => Promise<void>): Promise<void> {
  const s = await startScenario();
  try {
    await fn(s);
  } finally {
    await s.cleanup();
  }
}

function reportConfigMap(s: Scenario): KubeObject & { data: Record<string, string> } {
  const cm = s.sim.store.get(R.configMaps, FLEET_REPORT.name, FLEET_REPORT.namespace) as (KubeObject & { data: Record<string, string> }) | undefined;
  assert.ok(cm, `ConfigMap ${FLEET_REPORT.namespace}/${FLEET_REPORT.name} exists`);
  return cm;
}

function assertKubernetesValid(obj: KubeObject, Model: typeof ConfigMap | typeof Namespace): void {
  // validate() throws with the schema paths that fail.
  new Model(obj as never).validate();
}

test('a finished run records its outcome as a ConfigMap: the node report as data, no secret, valid Kubernetes objects; a re-run updates it', async () => {
  await withScenario(async (s) => {
    const files = signedSiteConfigFiles(s.node.root, demoSiteConfigFiles(s.sim));
    s.node.attachVolume('sdb1', 'SITE-CONFIG', files);
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));

    const cm = reportConfigMap(s);
    assertKubernetesValid(cm, ConfigMap);
    const ns = s.sim.store.get(R.namespaces, FLEET_REPORT.namespace) as KubeObject;
    assertKubernetesValid(ns, Namespace);
    assert.equal(ns.metadata?.labels?.['app.kubernetes.io/managed-by'], 'sno-reconfigure');

    const nodeReport = JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/report.json'), 'utf8')) as Report;
    assert.equal(cm.data.result, 'succeeded');
    assert.equal(cm.metadata?.labels?.[RESULT_LABEL], 'succeeded');
    assert.equal(cm.data.siteConfig, 'store-0042');
    assert.equal(cm.data.digest, nodeReport.siteConfig.digest);
    assert.equal(cm.data.node, s.sim.options.nodeName);
    assert.match(cm.data.finishedAt!, /^\d{4}-\d\d-\d\dT/);
    assert.equal(cm.data.finishedAt, nodeReport.finishedAt);
    assert.deepEqual(JSON.parse(cm.data['report.json']!), nodeReport, 'the ConfigMap carries the node report itself');
    const soonest = nodeReport.certificates!.map((c) => c.notAfter).sort()[0];
    assert.equal(cm.data.certificatesExpireFirst, soonest);

    // No secret of the site-config reaches the cluster's copy: not the pull secret's auth, not a key.
    const text = JSON.stringify(cm);
    const pullSecret = JSON.parse(files['pull-secret.json']!) as { auths: Record<string, { auth: string }> };
    for (const { auth } of Object.values(pullSecret.auths)) {
      assert.ok(!text.includes(auth), 'the pull secret auth is not in the ConfigMap');
      assert.ok(!text.includes(Buffer.from(auth, 'base64').toString()), 'nor its decoded user:password');
    }
    assert.doesNotMatch(text, /PRIVATE KEY/);

    // A second run of the same config (done marker removed) updates the same ConfigMap in place.
    const firstVersion = cm.metadata?.resourceVersion;
    rmSync(path.join(s.node.root, 'etc/sno-reconfigure/done'));
    const again = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(again.code, 0, again.stdout.slice(-3000));
    const updated = reportConfigMap(s);
    assert.notEqual(updated.metadata?.resourceVersion, firstVersion, 'updated on the re-run');
    assert.ok(Date.parse(updated.data.updatedAt!) > Date.parse(cm.data.updatedAt!));
    assert.equal(JSON.parse(updated.data['report.json']!).finishedAt, updated.data.finishedAt, 'the re-run is the one recorded');
    assert.notEqual(updated.data.finishedAt, cm.data.finishedAt);
  });
});

test('a run that fails after the API answered records result failed with the step, the message and what to do', async () => {
  await withScenario(async (s) => {
    s.sim.degradeOperator('authentication', 'OAuthServerDeploymentDegraded', 'the oauth server is crashlooping');
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { timeouts: { settle: '8s', settleStability: '2s' } } }) });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 1, res.stdout.slice(-3000));
    const cm = reportConfigMap(s);
    assertKubernetesValid(cm, ConfigMap);
    assert.equal(cm.data.result, 'failed');
    assert.equal(cm.metadata?.labels?.[RESULT_LABEL], 'failed');
    assert.equal(cm.data.failedStep, 'settle');
    assert.match(cm.data.error!, /authentication/);
    assert.ok(cm.data.remedy);
    assert.equal(cm.data.finishedAt, undefined, 'a failed run has not finished');
  });
});

test('the write rides out an API that answers 503 for a while, and gives up within its budget with a warning, never an exception', async () => {
  const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running' });
  const lines: string[] = [];
  const log = createLogger({ format: 'json', journal: false, write: (l) => lines.push(l) });
  const client = createClusterClient(await loadKubeconfig((p) => readFile(p), sim.kubeconfigs.localhostRecovery), { log });
  try {
    const report = { result: 'succeeded', siteConfig: { name: 'store-0042', digest: 'a'.repeat(64) }, starts: 1, node: { name: sim.options.nodeName }, cluster: {}, steps: [], changes: [], warnings: [] } satisfies Report;
    const objects = fleetReportObjects(report, 'succeeded', new Date());
    const signal = new AbortController().signal;

    // The simulator's faults run on its own scaled clock: real milliseconds become simulated ones.
    const realMsFromNow = (ms: number) => sim.clock.now() + ms / sim.options.timeScale;
    sim.api.faults = { unavailableUntil: realMsFromNow(2_500) };
    assert.equal(await publishFleetReport(async () => client, objects, { timer: realTimer, signal, log, budgetMs: 60_000 }), true);
    assert.equal((sim.store.get(R.configMaps, FLEET_REPORT.name, FLEET_REPORT.namespace) as { data: Record<string, string> }).data.result, 'succeeded');

    // An outage far longer than the budget: giving up before it ends is the budget at work, however loaded the machine.
    sim.api.faults = { unavailableUntil: realMsFromNow(30 * 60_000) };
    const started = Date.now();
    assert.equal(await publishFleetReport(async () => client, fleetReportObjects(report, 'failed', new Date()), { timer: realTimer, signal, log, budgetMs: 3_000 }), false);
    assert.ok(Date.now() - started < 10 * 60_000, 'bounded by its budget, not by the outage');
    assert.ok(lines.some((l) => l.includes('the fleet will not see this outcome')), lines.join(''));
    assert.equal((sim.store.get(R.configMaps, FLEET_REPORT.name, FLEET_REPORT.namespace) as { data: Record<string, string> }).data.result, 'succeeded', 'nothing half-written');
  } finally {
    sim.api.faults = {};
    await client.close();
    await sim.stop();
  }
});

test('the report lives outside the reserved openshift- prefix; a ConfigMap an earlier agent wrote under openshift-sno-reconfigure is kept up to date, a foreign one left alone', async () => {
  assert.equal(FLEET_REPORT.namespace.startsWith('openshift-'), false);
  const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running' });
  const log = createLogger({ format: 'json', journal: false, write: () => {} });
  const client = createClusterClient(await loadKubeconfig((p) => readFile(p), sim.kubeconfigs.localhostRecovery), { log });
  try {
    const report = { result: 'succeeded', siteConfig: { name: 'store-0042', digest: 'a'.repeat(64) }, starts: 1, node: { name: sim.options.nodeName }, cluster: {}, steps: [], changes: [], warnings: [] } satisfies Report;
    const old = fleetReportObjects(report, 'failed', new Date());
    // What the earlier agent left: its namespace and ConfigMap, labelled as ours.
    sim.store.create(R.namespaces, { ...old.namespace, metadata: { ...old.namespace.metadata, name: LEGACY_FLEET_REPORT_NAMESPACE } });
    sim.store.create(R.configMaps, { ...old.configMap, metadata: { ...old.configMap.metadata, namespace: LEGACY_FLEET_REPORT_NAMESPACE } });
    const run = { timer: realTimer, signal: new AbortController().signal, log, budgetMs: 60_000 };
    assert.equal(await publishFleetReport(async () => client, fleetReportObjects(report, 'succeeded', new Date()), run), true);
    const result = (ns: string) => (sim.store.get(R.configMaps, FLEET_REPORT.name, ns) as { data: Record<string, string> } | undefined)?.data.result;
    assert.equal(result(FLEET_REPORT.namespace), 'succeeded');
    assert.equal(result(LEGACY_FLEET_REPORT_NAMESPACE), 'succeeded', 'a policy reading the old place reads the new outcome');

    // Somebody else's ConfigMap of that name is not ours to write.
    const foreign = sim.store.get(R.configMaps, FLEET_REPORT.name, LEGACY_FLEET_REPORT_NAMESPACE)!;
    sim.store.update(R.configMaps, { ...foreign, metadata: { ...foreign.metadata, labels: {} }, data: { result: 'theirs' } });
    assert.equal(await publishFleetReport(async () => client, fleetReportObjects(report, 'failed', new Date()), run), true);
    assert.equal(result(FLEET_REPORT.namespace), 'failed');
    assert.equal(result(LEGACY_FLEET_REPORT_NAMESPACE), 'theirs');
  } finally {
    await client.close();
    await sim.stop();
  }
});

test('a report with an unusual number of changes still fits a ConfigMap (1 MiB) and says how many were left out', () => {
  const changes = Array.from({ length: 20_000 }, (_, i) => ({ kind: 'Route', target: `ns-${i}/route-with-a-rather-long-name-${i}`, action: 'update' as const, detail: 'moved to the new apps domain'.repeat(2) }));
  const report = { result: 'succeeded', siteConfig: { name: 'big' }, starts: 1, node: {}, cluster: {}, steps: [], changes, warnings: [] } satisfies Report;
  const { configMap } = fleetReportObjects(report, 'succeeded', new Date());
  const data = configMap.data as Record<string, string>;
  const size = Object.entries(data).reduce((n, [k, v]) => n + k.length + Buffer.byteLength(v), 0);
  assert.ok(size < 1024 * 1024, `${size} bytes`);
  const parsed = JSON.parse(data['report.json']!) as { changes: unknown[]; changesLeftOut: number };
  assert.equal(parsed.changes.length + parsed.changesLeftOut, 20_000);
  assertKubernetesValid(configMap, ConfigMap);
});
