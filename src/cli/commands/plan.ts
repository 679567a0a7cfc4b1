import * as path from 'node:path';
import { realClock } from '../../engine/clock';
import { nodeNameOf, readBaseline } from '../../engine/identity';
import { renderPlan } from '../../engine/plan';
import { loadSiteConfig } from '../../siteconfig/load';
import { readLastIssued } from '../../engine/last-issued';
import { STEPS } from '../../steps/index';
import { EXIT_FAILURE, EXIT_OK, UsageError, type CliIo, type Command, type ParsedArgs } from '../command';
import { imageAt } from './validate';
import { LocalHost } from '../../host/host';
import { NODE_OPTIONS, NODE_OPTIONS_HELP, endpointFrom, hostFrom, kubeconfigFrom, loggerFor, stateDirFrom } from '../common';
import { PLAN_SUMMARY } from './summaries';

export const planCommand: Command = {
  name: 'plan',
  summary: PLAN_SUMMARY,
  help: `Usage: sno-reconfigure plan PATH [options]

PATH is a site-config file, a directory holding site-config.yaml or site-configs/, a mounted volume, or a
FAT or ISO 9660 image file of one (read as validate reads it, nothing is mounted).
Prints, for each step of a run, which files, units and cluster objects it would change. The cluster steps
need the API (node-local kubeconfig); without it the plan says so for each of them.

Options:
${NODE_OPTIONS_HELP}
  --ingress-endpoint HOST:PORT   where this node's router listens (default: the API's host, port 443)

Exit status: 0 planned, 1 invalid site-config, 2 usage.
`,
  options: { ...NODE_OPTIONS, 'ingress-endpoint': { type: 'string' } },
  async run(args, io) {
    const [shown, ...extra] = args.positionals;
    if (!shown || extra.length) throw new UsageError('expects exactly one PATH');
    const image = await imageAt(new LocalHost({ root: '/', env: io.env }), path.resolve(io.cwd, shown));
    if (image instanceof Error) {
      io.err(`sno-reconfigure plan: ${image.message}\n`);
      return EXIT_FAILURE;
    }
    try {
      return await planAt(image?.dir ?? shown, shown, args, io);
    } finally {
      await image?.remove();
    }
  },
};

/** `shown`: how messages name PATH (the image, not the folder its files were copied into). */
async function planAt(location: string, shown: string, args: ParsedArgs, io: CliIo): Promise<number> {
  const host = hostFrom(args, io);
  const log = loggerFor(io, { level: 'warn' });
  // As run judges it: a signed config issued before the one this node applied last is refused.
  const lastIssued = await readLastIssued(host, stateDirFrom(args));
  const result = await loadSiteConfig(location, { host, ...(lastIssued !== undefined ? { lastIssued } : {}) });
  if (result.status === 'not-for-this-machine') {
    io.err(`${shown}: not for this machine:\n${result.reasons.map((r) => `  - ${r}`).join('\n')}\n`);
    return EXIT_FAILURE;
  }
  if (result.status === 'invalid') {
    io.err(`${shown}: invalid site-config:\n${result.errors.map((e) => `  - ${e.path}: ${e.message}`).join('\n')}\n`);
    return EXIT_FAILURE;
  }
  const baseline = await readBaseline(host, log);
  const ingressEndpoint = endpointFrom(args, 'ingress-endpoint');
  io.out(
    await renderPlan({
      host,
      log,
      site: result.site,
      steps: STEPS,
      stateDir: stateDirFrom(args),
      clock: realClock,
      signal: new AbortController().signal,
      kubeconfig: kubeconfigFrom(args),
      nodeName: await nodeNameOf(host, baseline),
      baseline,
      ...(ingressEndpoint ? { ingressEndpoint } : {}),
    }),
  );
  return EXIT_OK;
}
