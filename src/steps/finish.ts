// Step "finish": write the report, show the outcome on the console, then disable the service and leave the
// done marker its `ConditionPathExists=!` checks — the way bootstrap-in-place's post-reboot service
// disables itself (seed 001). Marker before disable: a power cut between them leaves an enabled unit that
// systemd will not start again (the condition), never a second run.
import { DONE_MARKER, STATE_FILES, UNIT_NAME } from '../paths';
import { writeDoneMarker } from '../engine/done-marker';
import type { Report } from '../engine/report';
import type { Step } from '../engine/step';
import { titleOf } from './titles';

export function createFinishStep(report: () => Report): Step {
  return {
    name: 'finish',
    title: titleOf('finish'),

    async plan(ctx) {
      return [
        { kind: 'file', target: `${ctx.stateDir}/${STATE_FILES.report}`, action: 'write' },
        { kind: 'file', target: DONE_MARKER, action: 'write' },
        { kind: 'unit', target: UNIT_NAME, action: 'disable' },
      ];
    },

    async check(ctx) {
      return ctx.host.exists(DONE_MARKER);
    },

    async apply(ctx) {
      // The report is final once this step is: write it as such (a power cut after this write leaves the
      // marker unwritten, and the step runs again).
      const draft = report();
      const r: Report = { ...draft, result: 'succeeded', steps: draft.steps.map((st) => (st.name === 'finish' ? { ...st, state: 'done' } : st)) };
      const reportPath = `${ctx.stateDir}/${STATE_FILES.report}`;
      await ctx.host.writeFileAtomic(reportPath, `${JSON.stringify(r, null, 2)}\n`, 0o644);
      // Shown while the marker and the unit are taken care of (agetty --reload and systemctl both take a moment).
      const shown = ctx.progress.banner({
        tone: 'success',
        headline: `site configuration "${r.siteConfig.name}" applied`,
        lines: [
          ...(r.cluster.apiUrl ? [`API:     ${r.cluster.apiUrl}`] : []),
          ...(r.cluster.consoleUrl ? [`Console: ${r.cluster.consoleUrl}`] : []),
          ...(r.kubeconfig ? [`Kubeconfig for the new API name: ${r.kubeconfig}`] : []),
          ...(r.kubeconfig && r.kubeconfigExpires ? [`  its certificate expires ${r.kubeconfigExpires}; log in with oc login before then`] : []),
          `Report: ${reportPath}`,
          ...(r.warnings.length ? [`${r.warnings.length} warning(s): see the report`] : []),
        ],
      });
      await writeDoneMarker(ctx.host, { finishedAt: new Date(ctx.clock.now()).toISOString(), siteConfig: r.siteConfig.name ?? '', digest: r.siteConfig.digest ?? '' });
      const disabled = await ctx.host.run('systemctl', ['disable', UNIT_NAME], { timeoutMs: 60_000 });
      if (disabled.code !== 0) ctx.warn(`could not disable ${UNIT_NAME} (${disabled.stderr.trim() || `exit ${disabled.code}`}); the done marker ${DONE_MARKER} keeps it from running again`);
      else ctx.changed({ kind: 'unit', target: UNIT_NAME, action: 'disable' });
      await shown;
    },

    async verify() {},
  };
}
