// Step "settle": wait — for every rollout the cluster steps started, all at once — until the cluster has
// settled (DESIGN.md section 1, step 8): ClusterVersion Available and not Progressing, no ClusterOperator
// Degraded or Progressing, node Ready, no pending CSR of this node, pool master on its new rendered config,
// the new names serving certificates that verify, the routes moved to the new apps domain. All of it must hold
// at once for the stability window (timeouts.settleStability; operators flap), within timeouts.settle.
//
// Watches on cluster operators, pools, nodes, CSRs and the ClusterVersion wake the loop as soon as something
// changes; a periodic re-check (TLS, routes, a full re-list) covers what a watch cannot see. Every sleep is
// ctx.clock's, so tests run on scaled time. A component that stays Degraded beyond a grace period ends the wait
// early with its name and message (waiting the full 45 minutes would only delay the technician).
import type { V1CertificateSigningRequest, V1Node } from '@kubernetes/client-node';
import { R } from '../cluster/resources';
import type { ClusterClient, KubeObject } from '../cluster/types';
import { formatDuration } from '../engine/clock';
import { StepError, type Step, type StepContext } from '../engine/step';
import { Wakeup } from '../engine/wakeup';
import { expectedNode } from './expected-node';
import { WatchedCache } from './settle/cache';
import { clusterBlockers, rolloutStarted, type Blocker, type ClusterSnapshot } from './settle/conditions';
import { domainChecks, followUpRoutes, tlsBlockers, type DomainChecks } from './domain/settled';
import { readRollouts, type ClusterOperator, type ExpectedRollout, type MachineConfigPool } from './rollouts';
import type { RouteProgress } from './domain/routes';
import { isTransient, withRetry } from '../cluster/retry';

/** How often settle looks again without a watch event (TLS, routes, stability window end). */
export const RECHECK_MS = 10_000;
/**
 * Once only the slow checks block, they run again after 250 ms, 500 ms, 1 s, then every 2 s: the endpoints
 * switch certificates right as their rollout ends, and every interval here is added to the run (issue #8).
 */
const ONLY_SLOW_FIRST_RECHECK_MS = 250;
const ONLY_SLOW_RECHECK_MS = 2_000;
/** Full re-list of the watched resources, against anything a dropped watch missed. */
const RELIST_MS = 120_000;
/** A component Degraded this long (continuously) ends the wait: operators report Degraded briefly during rollouts. */
export const DEGRADED_GRACE_MS = 10 * 60_000;
/** An expected rollout that has not started after this long is no longer waited for (with a warning). */
export const REACTION_GRACE_MS = 10 * 60_000;
const STATUS_EVERY_MS = 15_000;

interface SettleData {
  blocking?: string[];
  routes?: RouteProgress;
  settledAt?: string;
}


interface Caches {
  versions: WatchedCache<KubeObject>;
  operators: WatchedCache<ClusterOperator>;
  pools: WatchedCache<MachineConfigPool>;
  nodes: WatchedCache<V1Node & KubeObject>;
  csrs: WatchedCache<V1CertificateSigningRequest & KubeObject>;
}

function snapshot(c: Caches): ClusterSnapshot {
  return {
    clusterVersion: c.versions.items().find((v) => v.metadata?.name === 'version'),
    operators: c.operators.items(),
    pools: c.pools.items(),
    nodes: c.nodes.items(),
    csrs: c.csrs.items(),
  };
}

function summary(blockers: Blocker[], max = 3): string {
  const texts = blockers.map((b) => b.text);
  return texts.length <= max ? texts.join(', ') : `${texts.slice(0, max).join(', ')} and ${texts.length - max} more`;
}

/** openshift-apiserver has yet to roll out (the new appsDomain): routes cannot get hosts on it before. */
function openshiftApiserverRollingOut(fast: Blocker[]): boolean {
  return fast.some((b) => b.key.startsWith('co/openshift-apiserver/') || b.key === 'rollout/co/openshift-apiserver');
}

/** TLS on the wire and the route follow-up; an API hiccup here is a blocker for this round, not a failure. */
async function slowChecks(ctx: StepContext, client: ClusterClient, checks: DomainChecks, routes: RouteProgress, log: StepContext['log'], fast: Blocker[]): Promise<Blocker[]> {
  const out: Blocker[] = [];
  try {
    const r = await followUpRoutes(ctx, client, checks, routes, () => ctx.save(), openshiftApiserverRollingOut(fast));
    if (r.pending > 0) out.push({ key: 'routes', text: `${r.pending} route(s) on the old apps domain to replace${r.hostsReady ? '' : ' (waiting for openshift-apiserver to generate hosts on the new apps domain)'}` });
  } catch (e) {
    if (!isTransient(e)) throw e;
    log.warn({ err: (e as Error).message }, 'route follow-up failed; trying again');
    out.push({ key: 'routes', text: `routes: ${(e as Error).message}` });
  }
  out.push(...(await tlsBlockers(checks)).blockers);
  return out;
}

async function settle(ctx: StepContext, client: ClusterClient): Promise<void> {
  const data = ctx.data as SettleData;
  const timeouts = ctx.site.resolved.timeouts;
  const deadline = ctx.deadline('settle', timeouts.settle);
  ctx.progress.extendTimeout(deadline.totalMs);
  const wakeup = new Wakeup();
  const stop = new AbortController();
  const onStop = () => stop.abort();
  ctx.signal.addEventListener('abort', onStop, { once: true });
  const log = ctx.log.child({ step: 'settle' });
  const caches: Caches = {
    versions: new WatchedCache(client, R.clusterVersions, () => wakeup.wake(), log),
    operators: new WatchedCache(client, R.clusterOperators, () => wakeup.wake(), log),
    pools: new WatchedCache(client, R.machineConfigPools, () => wakeup.wake(), log),
    nodes: new WatchedCache(client, R.nodes, () => wakeup.wake(), log),
    csrs: new WatchedCache(client, R.csrs, () => wakeup.wake(), log),
  };
  try {
    const retry = {
      sleep: (ms: number, s?: AbortSignal) => ctx.clock.sleep(ms, s),
      signal: ctx.signal,
      attempts: 8,
      // Reported: the technician should see why settle is slow to start (issue #8: outages are reported).
      onRetry: (err: unknown, attempt: number, delayMs: number) => log.warn({ err: (err as Error).message, attempt, retryInMs: delayMs }, 'the API is not available; trying again'),
    };
    await Promise.all(Object.values(caches).map((c: WatchedCache<KubeObject>) => withRetry(() => c.start(stop.signal), retry)));
    const checks: DomainChecks = await withRetry(() => domainChecks(ctx, client), retry);
    let awaited: ExpectedRollout[] = await readRollouts(ctx);
    const startedAt = ctx.clock.now();
    const degradedSince = new Map<string, number>();
    let stableSince: number | undefined;
    let lastRelist = ctx.clock.now();
    let nextSlowCheckAt = -Infinity;
    let slowBlockers: Blocker[] = [];
    let onlySlowDelay = ONLY_SLOW_FIRST_RECHECK_MS;
    let lastFastKeys = new Set<string>();
    let lastSummary = '';
    let lastStatus = { key: '', at: -Infinity };
    // The status line goes to the journal, systemd and the banner: on change, else at most every STATUS_EVERY_MS.
    const status = (key: string, line: string) => {
      const at = ctx.clock.now();
      if (key === lastStatus.key && at - lastStatus.at < STATUS_EVERY_MS) return;
      lastStatus = { key, at };
      ctx.progress.status(line);
    };
    data.routes ??= {};

    for (;;) {
      if (ctx.signal.aborted) throw new StepError('interrupted while waiting for the cluster to settle', 'The agent continues after a restart.');
      const now = ctx.clock.now();
      if (now - lastRelist >= RELIST_MS) {
        lastRelist = now;
        await Promise.all(Object.values(caches).map((c: WatchedCache<KubeObject>) => c.relist().catch((e: unknown) => log.warn({ err: (e as Error).message }, 're-list failed'))));
      }
      const snap = snapshot(caches);

      // Rollouts that never started: the operator may have had nothing to do (e.g. the same rendered config).
      awaited = awaited.filter((r) => {
        if (rolloutStarted(r, snap) || now - startedAt < REACTION_GRACE_MS) return true;
        if (!r.optional) ctx.warn(`${r.kind === 'clusteroperator' ? `cluster operator ${r.name}` : `machine-config pool ${r.name}`} showed no rollout within ${formatDuration(REACTION_GRACE_MS)} after ${r.reason}; not waiting for it`);
        return false;
      });
      const node = ctx.facts.nodeName ? { nodeName: ctx.facts.nodeName, expectedNode: expectedNode(ctx, ctx.facts.nodeAddresses ?? []) } : {};
      const fast = clusterBlockers(snap, { ...node, rollouts: awaited });

      // The slow checks (TLS handshakes, route follow-up) depend on rollouts: they run at once when one of the
      // watched blockers went away (an operator finished: its endpoint may serve the new certificate, or
      // openshift-apiserver now generates hosts on the new apps domain), every RECHECK_MS while the cluster
      // still rolls out, and on a short, growing interval once only they block.
      const fastKeys = new Set(fast.map((b) => b.key));
      const somethingFinished = [...lastFastKeys].some((k) => !fastKeys.has(k));
      lastFastKeys = fastKeys;
      if (fast.length > 0) onlySlowDelay = ONLY_SLOW_FIRST_RECHECK_MS;
      if (somethingFinished || now >= nextSlowCheckAt) {
        slowBlockers = await slowChecks(ctx, client, checks, data.routes, log, fast);
        if (fast.length > 0) nextSlowCheckAt = now + RECHECK_MS;
        else {
          nextSlowCheckAt = now + onlySlowDelay;
          onlySlowDelay = Math.min(ONLY_SLOW_RECHECK_MS, onlySlowDelay * 2);
        }
      }
      const blockers = [...fast, ...slowBlockers];

      for (const b of blockers.filter((x) => x.degraded)) if (!degradedSince.has(b.key)) degradedSince.set(b.key, now);
      for (const key of [...degradedSince.keys()]) if (!blockers.some((b) => b.key === key)) degradedSince.delete(key);
      const stuck = blockers.find((b) => b.degraded && now - (degradedSince.get(b.key) ?? now) >= DEGRADED_GRACE_MS);
      if (stuck?.degraded) {
        throw new StepError(
          `${stuck.degraded.name} has been Degraded for more than ${formatDuration(DEGRADED_GRACE_MS)}: ${stuck.degraded.message || '(no message)'}`,
          `Look at \`oc get co\`, \`oc get mcp\` and \`oc describe\` of it; if the message points at a site-config value (certificate, pull secret, mirror, CA), fix the site-config. The agent re-checks after a restart.`,
        );
      }

      if (blockers.length === 0) {
        stableSince ??= now;
        const stableFor = now - stableSince;
        if (stableFor >= timeouts.settleStability) {
          data.blocking = [];
          data.settledAt = new Date(now).toISOString();
          await ctx.save();
          ctx.progress.status(`cluster settled (stable for ${formatDuration(stableFor)}; ${deadline.progress()})`);
          log.info({ waitedMs: now - startedAt }, 'cluster settled');
          return;
        }
        status('stable', `all conditions hold; stable for ${formatDuration(stableFor)} of ${formatDuration(timeouts.settleStability)} — ${deadline.progress()}`);
        lastSummary = 'stable';
      } else {
        stableSince = undefined;
        const text = summary(blockers);
        if (text !== lastSummary) {
          lastSummary = text;
          data.blocking = blockers.map((b) => b.text);
          await ctx.save();
          log.info({ blocking: data.blocking }, 'waiting for the cluster to settle');
        }
        status(text, `waiting for ${text} — ${deadline.progress()}`);
      }

      if (deadline.expired()) {
        throw new StepError(
          `the cluster did not settle within ${formatDuration(deadline.totalMs)}: ${blockers.length ? `still waiting for ${blockers.map((b) => b.text).join('; ')}` : `conditions held for less than ${formatDuration(timeouts.settleStability)} at a time`}`,
          'Look at `oc get co`, `oc get mcp`, `oc get nodes` and `oc get csr`; a rollout may just need longer (raise spec.timeouts.settle). The agent continues waiting after a restart.',
        );
      }
      const untilSlowCheck = nextSlowCheckAt - now;
      const untilStable = stableSince !== undefined ? stableSince + timeouts.settleStability - now : RECHECK_MS;
      await wakeup.sleep(ctx.clock, Math.max(1, Math.min(untilSlowCheck, untilStable, deadline.remainingMs())), ctx.signal);
    }
  } finally {
    stop.abort();
    ctx.signal.removeEventListener('abort', onStop);
    await Promise.all(Object.values(caches).map((c: WatchedCache<KubeObject>) => c.stopped()));
  }
}

export const settleStep: Step = {
  name: 'settle',
  title: 'Wait for the cluster to settle',

  async plan(ctx) {
    const rollouts = await readRollouts(ctx);
    return rollouts.map((r) => ({ kind: r.kind === 'clusteroperator' ? 'ClusterOperator' : 'MachineConfigPool', target: r.name, action: 'start' as const, detail: `rollout after ${r.reason}; waited for with all others at once` }));
  },

  async check() {
    // Settling is observed, never assumed: a resumed run looks again (and still writes nothing when all is done).
    return false;
  },

  async apply(ctx) {
    await settle(ctx, await ctx.cluster());
  },

  async verify() {},
};
