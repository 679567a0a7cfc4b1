// What `run` would change on this node and cluster, step by step, changing nothing (`plan`, `run --dry-run`).
// The cluster part needs the API; when it is not reachable (the usual case before kubelet runs at the
// site) the plan says so for each cluster step instead of guessing.
import type { Host } from '../host/host';
import type { Logger } from '../log';
import type { LoadedSiteConfig } from '../siteconfig/types';
import { Background, clusterOnce, endpointsOf, makeContext } from './context';
import type { Baseline } from './identity';
import { emptyJournal } from './journal';
import { buildReport } from './report';
import type { Change, Clock, Endpoint, RunFacts, Step } from './step';

export interface PlanInput {
  host: Host;
  log: Logger;
  site: LoadedSiteConfig;
  steps: readonly Step[];
  stateDir: string;
  clock: Clock;
  signal: AbortSignal;
  kubeconfig: string;
  nodeName: string;
  baseline: Baseline;
  ingressEndpoint?: Endpoint;
}

function describe(c: Change): string {
  return `${c.action} ${c.kind} ${c.target}${c.detail ? ` — ${c.detail}` : ''}`;
}

export async function renderPlan(input: PlanInput): Promise<string> {
  const { site } = input;
  const background = new Background();
  const cluster = clusterOnce(input.host, input.kubeconfig, input.log);
  const facts: RunFacts = { nodeName: input.nodeName, ...(input.baseline.internalAddresses ? { internalAddresses: input.baseline.internalAddresses } : {}) };
  let apiProblem: string | undefined;
  try {
    const client = await cluster();
    const ready = await client.readyz({ timeoutMs: 3_000 });
    if (!ready.ready) apiProblem = `the API at ${client.server} is not ready (${ready.detail})`;
    else facts.endpoints = await endpointsOf(cluster, input.ingressEndpoint);
  } catch (e) {
    apiProblem = (e as Error).message;
  }
  const lines = [
    `Plan for site-config "${site.resolved.name}" (sha256 ${site.digest.slice(0, 12)}…) on node ${input.nodeName || '<unknown>'} — nothing is changed.`,
    `New domain: api.${site.resolved.clusterName ?? input.baseline.clusterName ?? '<cluster>'}.${site.resolved.baseDomain}, *.apps.${site.resolved.clusterName ?? input.baseline.clusterName ?? '<cluster>'}.${site.resolved.baseDomain}`,
    // The validation's warnings.
    ...site.warnings.map((w) => `Warning: ${w.path}: ${w.message}`),
    '',
  ];
  const report = () => buildReport(emptyJournal(new Date(input.clock.now())), input.steps, site.resolved.baseDomain, new Date(input.clock.now()));
  const base = { host: input.host, log: input.log, site, stateDir: input.stateDir, kubeconfig: input.kubeconfig, clock: input.clock, signal: input.signal, cluster, background, report };
  let n = 0;
  for (const step of input.steps) {
    n += 1;
    lines.push(`${n}. ${step.title} [${step.name}]`);
    if (!step.nodeOnly && apiProblem) {
      lines.push(`   requires the API to plan in detail: ${apiProblem}`);
      continue;
    }
    const ctx = makeContext(step, { ...base }, undefined, undefined, undefined);
    Object.assign(ctx.facts, facts);
    try {
      if (step.name === 'api' && step.verify) {
        // Learn the cluster's name and domain (read-only) so the cluster steps can plan against them.
        await step.verify(ctx);
        Object.assign(facts, ctx.facts);
      }
      const changes = await step.plan(ctx);
      lines.push(...(changes.length ? changes.map((c) => `   - ${describe(c)}`) : ['   - nothing to change']));
    } catch (e) {
      lines.push(`   ! cannot plan this step: ${(e as Error).message}`);
    }
  }
  await background.stopAll();
  await cluster.close();
  return `${lines.join('\n')}\n`;
}
