// `sno-reconfigure renew-certificates`: renews the certificates the domain step issued for the new names,
// long after the run — the agent disables itself when done, and nothing else rotates a namedCertificate or a
// default ingress certificate (openshift-fidelity R4). It takes the config of record from the state
// directory, re-issues from the same cluster signers what is due (80 % of its lifetime used, or everything
// with --force), then waits for the rollouts this starts, as a run's settle step does.
import { rideOutApiOutages } from '../../cluster/retry';
import { realClock } from '../../engine/clock';
import { Background, clusterOnce, makeContext } from '../../engine/context';
import { Journal, readJournal } from '../../engine/journal';
import { buildReport, certificateLines, writeReportFile } from '../../engine/report';
import { DONE_MARKER, STATE_FILES } from '../../paths';
import { loadSiteConfig } from '../../siteconfig/load';
import { STEPS } from '../../steps/index';
import { domainStep, renewDomainCertificates } from '../../steps/domain/index';
import { RENEW_AT_LIFETIME_FRACTION } from '../../steps/domain/certificates';
import { settleStep } from '../../steps/settle';
import type { Step } from '../../engine/step';
import { EXIT_FAILURE, EXIT_OK, boolOpt, stringOpt, type Command } from '../command';
import { NODE_OPTIONS, NODE_OPTIONS_HELP, hostFrom, kubeconfigFrom, loggerFor, stateDirFrom } from '../common';
import { RENEW_SUMMARY } from './summaries';

export const renewCertificatesCommand: Command = {
  name: 'renew-certificates',
  summary: RENEW_SUMMARY,
  help: `Usage: sno-reconfigure renew-certificates [--dry-run] [--force] [options]

After a reconfiguration the new API name and the new apps domain are served by certificates the agent issued
from the cluster's own signers. Nothing in the cluster renews them. This command renews each one that has used
${Math.round(RENEW_AT_LIFETIME_FRACTION * 100)} % of its lifetime (every one with --force), from the same signers, and waits until
the cluster serves the new ones. Run it again at any time: certificates that are not due are kept. Certificates
the site-config provided are the site's to renew: put new ones on the media and run the agent again.

Options:
${NODE_OPTIONS_HELP}
  --dry-run           say what would be renewed, change nothing
  --force             renew every certificate the agent issued, due or not
  --log-level LEVEL   debug, info, warn (default), error

Exit status: 0 renewed or nothing due, 1 failed (nothing half-done: run it again), 2 usage.
`,
  options: { ...NODE_OPTIONS, 'dry-run': { type: 'boolean' }, force: { type: 'boolean' }, 'log-level': { type: 'string' } },
  async run(args, io) {
    const host = hostFrom(args, io);
    const stateDir = stateDirFrom(args);
    const log = loggerFor(io, { level: stringOpt(args, 'log-level') ?? 'warn' });
    const journal = await readJournal(host, stateDir, { keepCorruptCopy: false });
    if (!journal || !(journal.phase === 'succeeded' || (await host.exists(DONE_MARKER)))) {
      io.err(`sno-reconfigure renew-certificates: this node has no finished reconfiguration${journal ? ` (the last run is ${journal.phase})` : ''}; there is nothing to renew yet.\n`);
      return EXIT_FAILURE;
    }
    const loaded = await loadSiteConfig(host.resolve(`${stateDir}/${STATE_FILES.siteConfigCopy}`), { host });
    if (loaded.status !== 'valid') {
      io.err(`sno-reconfigure renew-certificates: the site-config this node was reconfigured with cannot be read back from ${stateDir}/${STATE_FILES.siteConfigCopy}; run the agent again with the site-config media.\n`);
      return EXIT_FAILURE;
    }
    const cluster = clusterOnce(host, kubeconfigFrom(args), log);
    const background = new Background();
    const base = {
      host, log, site: loaded.site, stateDir, kubeconfig: kubeconfigFrom(args), clock: realClock, signal: new AbortController().signal, cluster, background,
      report: () => buildReport(journal, STEPS, loaded.site.resolved.baseDomain, new Date()),
    };
    // What the run learned (node name and addresses, endpoints) is what settle checks against.
    const context = (step: Step) => {
      const ctx = makeContext(step, base, undefined, undefined, undefined);
      Object.assign(ctx.facts, journal.facts);
      return ctx;
    };
    try {
      const dryRun = boolOpt(args, 'dry-run');
      // The API restarts during rollouts (a renewal of a moment ago, an upgrade): ride that out as a run does.
      const result = await rideOutApiOutages(() => renewDomainCertificates(context(domainStep), { force: boolOpt(args, 'force'), dryRun }), {
        timer: realClock,
        signal: base.signal,
        onRetry: (err, delayMs) => log.warn({ err: (err as Error).message, retryInMs: delayMs }, 'the API is not available; trying again'),
      });
      if (result.renewed.length === 0) {
        io.out(['Nothing to renew: no certificate the agent issued is due.', ...certificateLines(result.certificates).map((l) => `  ${l}`), ''].join('\n'));
        return EXIT_OK;
      }
      const what = result.renewed.map((r) => `  ${r.secret}: ${r.reason}`);
      if (dryRun) {
        io.out(['Would renew (nothing was changed):', ...what, ''].join('\n'));
        return EXIT_OK;
      }
      io.out(['Renewed:', ...what, 'Waiting until the cluster serves them (kube-apiserver and router roll out)…', ''].join('\n'));
      await settleStep.apply(context(settleStep));
      // The node's own record follows: status, the report and the banner name the new expiries.
      const record = await Journal.open(host, stateDir);
      record.data.facts.certificates = result.certificates;
      await record.save();
      await writeReportFile(host, stateDir, buildReport(record.data, STEPS, loaded.site.resolved.baseDomain, new Date()));
      io.out(['The cluster serves the renewed certificates:', ...certificateLines(result.certificates).map((l) => `  ${l}`), ''].join('\n'));
      return EXIT_OK;
    } finally {
      await background.stopAll();
      await cluster.close();
    }
  },
};
