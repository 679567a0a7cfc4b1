// Step "finish": write the report, show the outcome on the console, then disable the service and leave the
// done marker its `ConditionPathExists=!` checks — the way bootstrap-in-place's post-reboot service
// disables itself (seed 001). Marker before disable: a power cut between them leaves an enabled unit that
// systemd will not start again (the condition), never a second run.
import { CommandError } from '../host/command-error';
import { agentUnits, systemctl, unitQuery } from '../host/systemctl';
import { DONE_MARKER, RENEW_TIMER, STATE_FILES, UNIT_NAME } from '../paths';
import { writeDoneMarker } from '../engine/done-marker';
import { closeRelocation } from '../engine/relocation-end';
import { certificateLines, writeReportFile, type Report } from '../engine/report';
import { FLEET_REPORT, fleetReportObjects, publishFleetReport } from '../engine/fleet-report';
import type { Change, Step } from '../engine/step';
import { removeEarlyKeys } from './ssh-early';

export const finishStep: Step = {
  name: 'finish',
  title: 'Write the report and disable the service',
  nodeOnly: true,

  async plan(ctx) {
    return [
      { kind: 'file', target: `${ctx.stateDir}/${STATE_FILES.report}`, action: 'write' },
      { kind: 'ConfigMap', target: `${FLEET_REPORT.namespace}/${FLEET_REPORT.name}`, action: 'write', detail: 'the outcome, where fleet tools read it' },
      ...(ctx.site.resolved.ssh ? [{ kind: 'file', target: 'authorized_keys.d/sno-reconfigure of core', action: 'delete' as const, detail: "the early SSH keys, once the cluster's are on the node" }] : []),
      { kind: 'file', target: DONE_MARKER, action: 'write' },
      ...[await renewalChange(ctx)].filter((c) => c !== undefined),
      { kind: 'unit', target: UNIT_NAME, action: 'disable' },
    ];
  },

  async check(ctx) {
    return ctx.host.exists(DONE_MARKER);
  },

  async apply(ctx) {
    // The report is final once this step is: write it as such (a power cut after this write leaves the
    // marker unwritten, and the step runs again).
    // Settle saw the pool updated: the cluster's keys are on the node, the early ones can go (ssh-early.ts).
    if (await removeEarlyKeys(ctx.host)) ctx.log.info("removed the early SSH keys: the keys in the cluster's MachineConfig are on the node now");
    const draft = ctx.report();
    // The journal says succeeded only after this step; the report written here is that outcome already.
    const r: Report = { ...draft, result: 'succeeded', finishedAt: new Date(ctx.clock.now()).toISOString(), steps: draft.steps.map((st) => (st.name === 'finish' ? { ...st, state: 'done' } : st)) };
    const reportPath = `${ctx.stateDir}/${STATE_FILES.report}`;
    const movedAside = await writeReportFile(ctx.host, ctx.stateDir, r);
    if (movedAside !== undefined) ctx.warn(movedAside);
    // Shown while the marker and the unit are taken care of (agetty --reload and systemctl both take a moment).
    const shown = ctx.progress.banner({
      tone: 'success',
      headline: `site configuration "${r.siteConfig.name}" applied`,
      lines: [
        ...(r.cluster.apiUrl ? [`API:     ${r.cluster.apiUrl}`] : []),
        ...(r.cluster.consoleUrl ? [`Console: ${r.cluster.consoleUrl}`] : []),
        ...(r.kubeconfig ? [`Kubeconfig for the new API name: ${r.kubeconfig}`] : []),
        ...(r.kubeconfig && r.kubeconfigExpires
          ? [Date.parse(r.kubeconfigExpires) > ctx.clock.now() ? `  its certificate expires ${r.kubeconfigExpires}; log in with oc login before then` : `  its certificate expired ${r.kubeconfigExpires}: log in with oc login (kubeadmin or a cluster user) instead`]
          : []),
        ...soonestExpiry(r.certificates),
        `Report: ${reportPath}`,
        ...(r.warnings.length ? [`${r.warnings.length} warning(s): see the report`] : []),
      ],
    });
    // Before the marker: a power cut after the write runs this step again, which writes the same outcome again.
    await publishFleetReport(ctx.cluster, fleetReportObjects(r, 'succeeded', new Date(ctx.clock.now())), { timer: ctx.clock, signal: ctx.signal, log: ctx.log, budgetMs: FLEET_REPORT_BUDGET_MS });
    // Before the marker: once it is written nothing of this step runs again (the thirteenth hostile re-test of issue 36:
    // a power cut right after it lost the signed config's renewal timer). Enabling it twice does no harm.
    const renewal = await renewalChange(ctx);
    if (renewal) await setRenewal(ctx, renewal);
    await writeDoneMarker(ctx.host, { finishedAt: new Date(ctx.clock.now()).toISOString(), siteConfig: r.siteConfig.name ?? '', digest: r.siteConfig.digest ?? '' });
    // After the marker: a power cut before it resumes this run, which still needs its records; one right after it is
    // closed by the next start (runner.ts reportAlreadyDone).
    await closeRelocation(ctx.host, ctx.stateDir);
    const units = await agentUnits(ctx.host);
    try {
      await systemctl(ctx.host, ['disable', ...units], 60_000);
      ctx.changed({ kind: 'unit', target: units.join(', '), action: 'disable' });
    } catch (e) {
      if (!(e instanceof CommandError)) throw e;
      ctx.warn(`could not disable ${units.join(', ')} (${e.detail}); the done marker ${DONE_MARKER} keeps them from running again`);
    }
    await shown;
  },

  async verify() {},
};

/** After settle the API is up: two minutes cover a kube-apiserver restart that happens to fall on this moment. */
const FLEET_REPORT_BUDGET_MS = 2 * 60_000;

/** The banner names the first certificate to expire: the date someone must act by. */
function soonestExpiry(certs: Report['certificates']): string[] {
  const first = certificateLines(certs ?? [])[0];
  if (!first) return [];
  return [`First to expire: the ${first}; renew with \`sno-reconfigure renew-certificates\``];
}

/**
 * spec.certificateRenewal: timer — the daily renewal look (shipped disabled in the MachineConfig) is enabled; manual, the
 * default, disables one an earlier site's config enabled (the fourteenth hostile re-test of issue 36: store A's timer
 * kept renewing at store B, whose office chose to renew by hand).
 */
async function renewalChange(ctx: Parameters<Step['apply']>[0]): Promise<Change | undefined> {
  if (ctx.site.resolved.certificateRenewal === 'timer') return { kind: 'unit', target: RENEW_TIMER, action: 'enable', detail: 'renews the issued certificates at 80 % of their lifetime' };
  // Off already, or never there: nothing to do. Any other answer (enabled, enabled-runtime, systemd not answering) is
  // disabled, or said when it cannot be (the fifteenth re-test: a timer enabled for this boot only stayed on).
  // (The MachineConfig writes it to /etc/systemd/system; the RPM ships none.)
  if (!(await ctx.host.exists(`/etc/systemd/system/${RENEW_TIMER}`)) || ['disabled', 'masked'].includes(await unitQuery(ctx.host, 'is-enabled', RENEW_TIMER))) return undefined;
  return { kind: 'unit', target: RENEW_TIMER, action: 'disable', detail: "an earlier site's automatic renewal: this site-config renews by hand" };
}

async function setRenewal(ctx: Parameters<Step['apply']>[0], change: Change): Promise<void> {
  try {
    await systemctl(ctx.host, [change.action, '--now', RENEW_TIMER], 60_000);
    ctx.changed(change);
  } catch (e) {
    if (!(e instanceof CommandError)) throw e;
    ctx.warn(change.action === 'enable' ? `could not enable ${RENEW_TIMER} (${e.detail}): renew the certificates with \`sno-reconfigure renew-certificates\` before they expire` : `could not disable ${RENEW_TIMER}, which an earlier site's config enabled (${e.detail}): run \`systemctl disable --now ${RENEW_TIMER}\``);
  }
}
