// Step "clock": the node's clock, checked (and with spec.ntp set right) before kubelet starts and the agent or
// the cluster issues any certificate. A node that was powered off for months may start with a clock that is
// wrong: a dead RTC battery puts it years back, and every certificate issued then is "not yet valid" for the
// rest of the world. Image-based install restarts chronyd with the site's chrony.conf at the same point, after
// the network (openshift-kni/lifecycle-agent main, lca-cli/postpivot/postpivot.go, ACM-26887).
//
// With spec.ntp the site's chrony.conf is written and chronyd restarted, so its `makestep 1.0 3` steps a wrong
// clock on its first updates — no reboot. When the node's current MachineConfig owns /etc/chrony.conf the file
// is left alone (the MCD would see the change as drift and degrade the node) and the sources are added to the
// running chronyd instead; step chrony makes them permanent either way. chronyd gets timeouts.clock to
// synchronise; a clock still more than a second off is stepped (`chronyc makestep`). Sources that do not answer
// are a warning, not a failure: the clock may still be right. A clock earlier than the moment the factory
// prepared the node is certainly wrong, and stops the run before it issues anything.
import { performance } from 'node:perf_hooks';
import { CHRONY_CONF, CHRONY_UNIT, addSources, chronyConf, makeStep, managedByMachineConfig, tracking, type Tracking } from '../host/chrony';
import { systemctl } from '../host/systemctl';
import { UNIT_NAME } from '../paths';
import { readBaseline } from '../engine/identity';
import { StepError, type Change, type Step, type StepContext } from '../engine/step';
import { formatDuration } from '../siteconfig/duration';
import { CLOCK_STEP_THRESHOLD_S, clockLine } from '../engine/report';

const POLL_MS = 2_000;
/** chronyd's own threshold (`makestep 1.0 3`): a smaller offset is slewed away, a larger one stepped. */
const STEP_THRESHOLD_S = CLOCK_STEP_THRESHOLD_S;

type SourcesChange = { change: Change; managed: boolean; content: string };

async function pendingSources(ctx: StepContext): Promise<SourcesChange | undefined> {
  const ntp = ctx.site.resolved.ntp;
  if (!ntp) return undefined;
  const content = chronyConf(ntp);
  const names = [...ntp.servers, ...ntp.pools].join(', ');
  if (await managedByMachineConfig(ctx.host, CHRONY_CONF)) {
    return { managed: true, content, change: { kind: 'time sources', target: 'chronyd', action: 'apply', detail: `${names}, added to the running chronyd: ${CHRONY_CONF} belongs to a MachineConfig until step chrony replaces it` } };
  }
  if ((await ctx.host.readTextIfExists(CHRONY_CONF)) === content) return undefined;
  return { managed: false, content, change: { kind: 'file', target: CHRONY_CONF, action: 'write', detail: `the site's time sources ${names}; chronyd restarted, so it sets the clock right without a reboot` } };
}

/** The wall clock's jump since `from` (a step by chronyd), in seconds: wall time passed minus real time passed. */
function jumpSince(from: { wall: number; mono: number }): number {
  return (Date.now() - from.wall - (performance.now() - from.mono)) / 1000;
}

async function waitForSync(ctx: StepContext): Promise<Tracking | string> {
  const deadline = ctx.deadline('chronyd to synchronise with the site\'s NTP servers', ctx.site.resolved.timeouts.clock);
  for (;;) {
    const t = await tracking(ctx.host);
    if (typeof t !== 'string' && t.synchronised) return t;
    if (deadline.expired()) return t;
    ctx.progress.status(`waiting for chronyd to synchronise with the site's NTP servers — ${deadline.progress()}`);
    await ctx.clock.sleep(Math.min(POLL_MS, Math.max(1, deadline.remainingMs())), ctx.signal);
  }
}

export const clockStep: Step = {
  name: 'clock',
  title: "Check the node's clock",
  nodeOnly: true,

  async plan(ctx) {
    const p = await pendingSources(ctx);
    return p ? [p.change] : [];
  },

  // The clock is checked on every run that reaches this step: there is nothing to find "already in place".
  async check() {
    return false;
  },

  async apply(ctx) {
    const ntp = ctx.site.resolved.ntp;
    const p = await pendingSources(ctx);
    const before = { wall: Date.now(), mono: performance.now() };
    if (p?.managed) {
      await addSources(ctx.host, ntp!);
      ctx.changed(p.change);
    } else if (p) {
      await ctx.host.writeFileAtomic(CHRONY_CONF, p.content, 0o644);
      await systemctl(ctx.host, ['restart', CHRONY_UNIT]);
      ctx.changed(p.change);
    }
    let t = ntp ? await waitForSync(ctx) : await tracking(ctx.host);
    let corrected = jumpSince(before);
    if (typeof t !== 'string' && t.synchronised && Math.abs(t.offsetSeconds ?? 0) > STEP_THRESHOLD_S) {
      // chronyd would slew this away at 0.05 % — days for an hour — so step it now, before anything is issued.
      const off = t.offsetSeconds ?? 0;
      if (await makeStep(ctx.host)) {
        corrected -= off;
        t = await tracking(ctx.host);
      }
    }
    const sources = ntp ? [...ntp.servers, ...ntp.pools].join(', ') : undefined;
    if (typeof t === 'string') {
      ctx.facts.clock = { checkedAt: new Date(ctx.clock.now()).toISOString(), synchronised: false };
      if (ntp) ctx.warn(`The node's clock could not be checked against the site's NTP servers (${sources}): ${t}. The node keeps its own time.`);
      else ctx.log.info(`The node's clock was not checked against NTP: ${t}.`);
    } else {
      ctx.facts.clock = {
        checkedAt: new Date(ctx.clock.now()).toISOString(),
        synchronised: t.synchronised,
        ...(t.source ? { source: t.source } : {}),
        ...(t.offsetSeconds !== undefined ? { offsetSeconds: t.offsetSeconds } : {}),
        ...(Math.abs(corrected) >= STEP_THRESHOLD_S ? { correctedSeconds: corrected } : {}),
      };
      const line = clockLine(ctx.facts.clock, sources);
      if (ntp && !t.synchronised) ctx.warn(`${line} after ${formatDuration(ctx.site.resolved.timeouts.clock)}: check that the node can reach them on UDP port 123.`);
      else ctx.log.info(`${line}.`);
    }
  },

  async verify(ctx) {
    const preparedAt = Date.parse((await readBaseline(ctx.host, ctx.log)).preparedAt ?? '');
    const now = ctx.clock.now();
    if (Number.isFinite(preparedAt) && now < preparedAt) {
      throw new StepError(
        `the node's clock says ${new Date(now).toISOString()}, which is before the factory prepared this node (${new Date(preparedAt).toISOString()}): certificates issued now would not be valid yet`,
        `Set the date and time in the server's firmware (BIOS/UEFI setup or the BMC), or give spec.ntp servers this node can reach, then restart the service (systemctl restart ${UNIT_NAME}).`,
      );
    }
  },
};
