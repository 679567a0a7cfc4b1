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
import { clusterBlockers, type ClusterSnapshot } from './settle/conditions';
import { DEGRADED_GRACE_MS, DegradedSince, RECHECK_MS, REACTION_GRACE_MS, SlowCheckSchedule, stillAwaited } from './settle/schedule';
import { domainChecks, followUpRoutes, tlsBlockers, type DomainChecks } from './domain/settled';
import { readRollouts, type Blocker, type ClusterOperator, type ExpectedRollout, type MachineConfigPool } from './rollouts';
import type { RouteProgress } from './domain/routes';
import { isTransient, withRetry } from '../cluster/retry';

/** Full re-list of the watched resources, against anything a dropped watch missed. */
const RELIST_MS = 120_000;
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
  out.push(...(await tlsBlockers(checks, new Date(ctx.clock.now()))).blockers);
  return out;
}

function startCaches(client: ClusterClient, wakeup: Wakeup, log: StepContext['log']): Caches {
  return {
    versions: new WatchedCache(client, R.clusterVersions, () => wakeup.wake(), log),
    operators: new WatchedCache(client, R.clusterOperators, () => wakeup.wake(), log),
    pools: new WatchedCache(client, R.machineConfigPools, () => wakeup.wake(), log),
    nodes: new WatchedCache(client, R.nodes, () => wakeup.wake(), log),
    csrs: new WatchedCache(client, R.csrs, () => wakeup.wake(), log),
  };
}

const allCaches = (c: Caches): WatchedCache<KubeObject>[] => Object.values(c) as WatchedCache<KubeObject>[];

/**
 * A component Degraded too long, and whether this run changed it: settle waits on every ClusterOperator
 * (as lifecycle-agent's health check does), so one that was already Degraded, or broke for another reason,
 * must not read as the site-config's fault.
 */
export function degradedTooLong(stuck: Blocker & { degraded: NonNullable<Blocker['degraded']> }, changedByRun: readonly ExpectedRollout[]): StepError {
  const ours = changedByRun.find((r) => stuck.degraded.name === `${r.kind === 'clusteroperator' ? 'cluster operator' : 'machine-config pool'} ${r.name}`);
  const why = ours ? `changed by this run (${ours.reason})` : 'not changed by this run (pre-existing or unrelated)';
  return new StepError(
    `${stuck.degraded.name}, ${why}, has been Degraded for more than ${formatDuration(DEGRADED_GRACE_MS)}: ${stuck.degraded.message || '(no message)'}`,
    `Look at \`oc get co\`, \`oc get mcp\` and \`oc describe\` of it; if the message points at a site-config value (certificate, pull secret, mirror, CA), fix the site-config. The agent re-checks after a restart.`,
  );
}

function notSettledInTime(totalMs: number, blockers: Blocker[], stabilityMs: number): StepError {
  return new StepError(
    `the cluster did not settle within ${formatDuration(totalMs)}: ${blockers.length ? `still waiting for ${blockers.map((b) => b.text).join('; ')}` : `conditions held for less than ${formatDuration(stabilityMs)} at a time`}`,
    'Look at `oc get co`, `oc get mcp`, `oc get nodes` and `oc get csr`; a rollout may just need longer (raise spec.timeouts.settle). The agent continues waiting after a restart.',
  );
}

/** How often the journal hears that settle is still waiting when nothing changed. */
export const SETTLE_HEARTBEAT_MS = 60_000;

/** "kube-apiserver (Progressing: …)" → "kube-apiserver": what a blocker is, without its current condition. */
export function blockerName(text: string): string {
  const at = text.indexOf(' (');
  return at < 0 ? text : text.slice(0, at);
}

/**
 * What settle writes to the journal: each thing it starts or stops waiting for, once, and a short heartbeat
 * when nothing changed for a while — never the whole list again every few seconds.
 */
export class BlockerLog {
  private shown = new Map<string, string>();
  private lastLineAt = -Infinity;

  constructor(
    private readonly log: StepContext['log'],
    private readonly now: () => number,
  ) {}

  update(blockers: readonly Blocker[], progress: string): void {
    const current = new Map(blockers.map((b) => [b.key, b.text]));
    let wrote = false;
    for (const [key, text] of this.shown) {
      if (!current.has(key)) {
        // Its name is enough here: the full text was on the line that started the wait.
        this.log.info(`no longer waiting for ${blockerName(text)}`);
        wrote = true;
      }
    }
    for (const [key, text] of current) {
      if (this.shown.get(key) !== text) {
        this.log.info(`waiting for ${text}`);
        wrote = true;
      }
    }
    this.shown = current;
    const at = this.now();
    if (wrote) this.lastLineAt = at;
    else if (current.size > 0 && at - this.lastLineAt >= SETTLE_HEARTBEAT_MS) {
      this.log.info(`still waiting for ${current.size} thing(s) to settle (${progress})`);
      this.lastLineAt = at;
    }
  }
}

/** The status line goes to the journal, systemd and the banner: on change, else at most every STATUS_EVERY_MS. */
function throttledStatus(ctx: StepContext): (key: string, line: string) => void {
  let last = { key: '', at: -Infinity };
  return (key, line) => {
    const at = ctx.clock.now();
    if (key === last.key && at - last.at < STATUS_EVERY_MS) return;
    last = { key, at };
    ctx.progress.status(line);
  };
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
  const caches = startCaches(client, wakeup, log);
  try {
    const retry = {
      sleep: (ms: number, s?: AbortSignal) => ctx.clock.sleep(ms, s),
      signal: ctx.signal,
      attempts: 8,
      // Reported: the technician should see why settle is slow to start (issue #8: outages are reported).
      onRetry: (err: unknown, attempt: number, delayMs: number) => log.warn({ err: (err as Error).message, attempt, retryInMs: delayMs }, 'the API is not available; trying again'),
    };
    await Promise.all(allCaches(caches).map((c) => withRetry(() => c.start(stop.signal), retry)));
    const checks: DomainChecks = await withRetry(() => domainChecks(ctx, client), retry);
    const recorded: ExpectedRollout[] = await readRollouts(ctx);
    let awaited = recorded;
    const startedAt = ctx.clock.now();
    const slow = new SlowCheckSchedule();
    const degraded = new DegradedSince();
    const status = throttledStatus(ctx);
    let slowBlockers: Blocker[] = [];
    let stableSince: number | undefined;
    let lastRelist = startedAt;
    let lastSummary = '';
    const journalLines = new BlockerLog(log, () => ctx.clock.now());
    data.routes ??= {};

    for (;;) {
      if (ctx.signal.aborted) throw new StepError('interrupted while waiting for the cluster to settle', 'The agent continues after a restart.');
      const now = ctx.clock.now();
      if (now - lastRelist >= RELIST_MS) {
        lastRelist = now;
        await Promise.all(allCaches(caches).map((c) => c.relist().catch((e: unknown) => log.warn({ err: (e as Error).message }, 're-list failed'))));
      }
      const snap = snapshot(caches);
      const kept = stillAwaited(awaited, snap, now, startedAt);
      awaited = kept.awaited;
      for (const r of kept.givenUp.filter((x) => !x.optional)) {
        ctx.warn(`${r.kind === 'clusteroperator' ? `cluster operator ${r.name}` : `machine-config pool ${r.name}`} showed no rollout within ${formatDuration(REACTION_GRACE_MS)} after ${r.reason}; not waiting for it`);
      }
      const node = ctx.facts.nodeName ? { nodeName: ctx.facts.nodeName, expectedNode: expectedNode(ctx, ctx.facts.nodeAddresses ?? []) } : {};
      const fast = clusterBlockers(snap, { ...node, rollouts: awaited });
      if (slow.due(now, fast)) {
        slowBlockers = await slowChecks(ctx, client, checks, data.routes, log, fast);
        slow.ran(now, fast.length);
      }
      const blockers = [...fast, ...slowBlockers];
      const stuck = degraded.stuck(blockers, now);
      if (stuck?.degraded) throw degradedTooLong({ ...stuck, degraded: stuck.degraded }, recorded);

      if (blockers.length === 0) {
        journalLines.update([], deadline.progress());
        stableSince ??= now;
        const stableFor = now - stableSince;
        if (stableFor >= timeouts.settleStability) {
          data.blocking = [];
          data.settledAt = new Date(now).toISOString();
          await ctx.save();
          ctx.progress.status(`cluster settled (stable for ${formatDuration(stableFor)}; ${deadline.progress()})`);
          log.info({ waitedMs: now - startedAt }, `cluster settled after ${formatDuration(now - startedAt)} (every condition held for ${formatDuration(stableFor)})`);
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
        }
        journalLines.update(blockers, deadline.progress());
        status(text, `waiting for ${text} — ${deadline.progress()}`);
      }

      if (deadline.expired()) throw notSettledInTime(deadline.totalMs, blockers, timeouts.settleStability);
      const untilStable = stableSince !== undefined ? stableSince + timeouts.settleStability - now : RECHECK_MS;
      await wakeup.sleep(ctx.clock, Math.max(1, Math.min(slow.msUntilDue(now), untilStable, deadline.remainingMs())), ctx.signal);
    }
  } finally {
    stop.abort();
    ctx.signal.removeEventListener('abort', onStop);
    await Promise.all(allCaches(caches).map((c) => c.stopped()));
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
