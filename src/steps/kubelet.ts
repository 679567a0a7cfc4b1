// Step "kubelet": the factory kept kubelet down so the node could not start anything before the site
// network was in place (seed 000) — with the hold file our MachineConfig's drop-in checks (see
// KUBELET_HOLD_FILE for why not a mask), or with a mask on a node prepared by hand. Release whichever
// holds it, enable, start, and wait until it is active.
import { systemctl, unitQuery } from '../host/systemctl';
import { KUBELET_HOLD_FILE, KUBELET_UNIT } from '../paths';
import type { Host } from '../host/host';
import { StepError, type Step } from '../engine/step';

const POLL_MS = 2_000;

/** When kubelet last became active, from systemd (`ActiveEnterTimestamp`, e.g. "Sun 2026-11-22 04:10:00 UTC"). */
async function activeSince(host: Host): Promise<string | undefined> {
  // TZ=UTC makes systemctl print the timestamp in UTC, which Date.parse can read unambiguously.
  const res = await host.run('systemctl', ['show', '-p', 'ActiveEnterTimestamp', '--value', KUBELET_UNIT], { timeoutMs: 30_000, env: { TZ: 'UTC' } });
  const m = res.stdout.trim().match(/(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) (UTC)?/);
  if (!m || !m[3]) return undefined;
  const t = Date.parse(`${m[1]}T${m[2]}Z`);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

export const kubeletStep: Step = {
  name: 'kubelet',
  title: 'Start kubelet',
  nodeOnly: true,

  async plan(ctx) {
    const enabled = await unitQuery(ctx.host, 'is-enabled', KUBELET_UNIT);
    const active = await unitQuery(ctx.host, 'is-active', KUBELET_UNIT);
    const held = await ctx.host.exists(KUBELET_HOLD_FILE);
    if (enabled === 'enabled' && active === 'active' && !held) return [];
    return [
      ...(held ? [{ kind: 'file', target: KUBELET_HOLD_FILE, action: 'delete' as const, detail: 'the factory hold on kubelet' }] : []),
      ...(enabled === 'masked' ? [{ kind: 'unit', target: KUBELET_UNIT, action: 'unmask' as const }] : []),
      ...(enabled !== 'enabled' ? [{ kind: 'unit', target: KUBELET_UNIT, action: 'enable' as const }] : []),
      { kind: 'unit', target: KUBELET_UNIT, action: 'start' as const, detail: `now ${active}` },
    ];
  },

  async check(ctx) {
    return !(await ctx.host.exists(KUBELET_HOLD_FILE)) && (await unitQuery(ctx.host, 'is-enabled', KUBELET_UNIT)) === 'enabled' && (await unitQuery(ctx.host, 'is-active', KUBELET_UNIT)) === 'active';
  },

  async apply(ctx) {
    if (await ctx.host.exists(KUBELET_HOLD_FILE)) {
      await ctx.host.remove(KUBELET_HOLD_FILE);
      ctx.changed({ kind: 'file', target: KUBELET_HOLD_FILE, action: 'delete' });
    }
    if ((await unitQuery(ctx.host, 'is-enabled', KUBELET_UNIT)) === 'masked') {
      await systemctl(ctx.host, ['unmask', KUBELET_UNIT]);
      ctx.changed({ kind: 'unit', target: KUBELET_UNIT, action: 'unmask' });
    }
    await systemctl(ctx.host, ['enable', KUBELET_UNIT]);
    ctx.changed({ kind: 'unit', target: KUBELET_UNIT, action: 'enable' });
    // --no-block: kubelet is Type=notify and may take long to report ready; we poll and report progress.
    ctx.facts.kubeletStartedAt = new Date(ctx.clock.now()).toISOString();
    await systemctl(ctx.host, ['start', '--no-block', KUBELET_UNIT]);
    ctx.changed({ kind: 'unit', target: KUBELET_UNIT, action: 'start' });
  },

  async verify(ctx) {
    const deadline = ctx.deadline('kubelet start', ctx.site.resolved.timeouts.kubelet);
    for (;;) {
      const state = await unitQuery(ctx.host, 'is-active', KUBELET_UNIT);
      if (state === 'active') {
        // Started before this run (by hand, or in an earlier boot): CSRs it filed since then are its own.
        ctx.facts.kubeletStartedAt ??= await activeSince(ctx.host) ?? new Date(ctx.clock.now()).toISOString();
        return;
      }
      if (state === 'failed') {
        throw new StepError('kubelet.service failed to start', 'Look at `journalctl -u kubelet -b` and `systemctl status kubelet`; the agent retries after a restart.');
      }
      if (deadline.expired()) {
        throw new StepError(`kubelet.service is still "${state}" after ${deadline.progress()}`, 'Look at `systemctl status kubelet` and `journalctl -u kubelet -b`.');
      }
      ctx.progress.status(`waiting for kubelet to become active (now ${state}, ${deadline.progress()})`);
      await ctx.clock.sleep(POLL_MS, ctx.signal);
    }
  },
};
