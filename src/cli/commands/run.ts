import { runAgent } from '../../engine/runner';
import { DEFAULT_DROP_DIR, DEFAULT_LABELS } from '../../paths';
import { boolOpt, listOpt, stringOpt, type Command } from '../command';
import { NODE_OPTIONS, NODE_OPTIONS_HELP, endpointFrom, hostFrom, kubeconfigFrom, loggerFor, stateDirFrom } from '../common';
import { RUN_SUMMARY } from './summaries';

export const runCommand: Command = {
  name: 'run',
  summary: RUN_SUMMARY,
  help: `Usage: sno-reconfigure run [options]

What sno-reconfigure.service runs on every boot until it has succeeded: waits for a site-config volume
(filesystem label ${DEFAULT_LABELS.join(', ')}, case-insensitive) or a file in the drop directory, validates it,
applies the site network (with rollback), starts kubelet, waits for the API, approves this node's CSRs,
applies the cluster changes, waits until the cluster has settled, then disables itself.
Every step is journaled: after a power cut it resumes where it stopped.

Options:
${NODE_OPTIONS_HELP}
  --drop-dir DIR      directory watched for a site-config (default ${DEFAULT_DROP_DIR})
  --label L           another accepted volume label (repeatable)
  --once              exit instead of waiting when no usable site-config is present
  --dry-run           find and validate the site-config, print the plan, change nothing
  --retry-network     retry a site-config whose network failed to verify 3 times (as re-inserting it does)
  --ingress-endpoint HOST:PORT
                      where this node's router listens, for checking served certificates
                      (default: the API's host, port 443)
  --log-level LEVEL   debug, info (default), warn, error

Exit status: 0 done (or nothing to do), 1 failed (systemd restarts the service after a pause), 2 usage.
`,
  options: {
    ...NODE_OPTIONS,
    'drop-dir': { type: 'string' },
    label: { type: 'string', multiple: true },
    once: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    'retry-network': { type: 'boolean' },
    'ingress-endpoint': { type: 'string' },
    'log-level': { type: 'string' },
  },
  async run(args, io) {
    const host = hostFrom(args, io);
    const ingressEndpoint = endpointFrom(args, 'ingress-endpoint');
    const level = stringOpt(args, 'log-level');
    const log = loggerFor(io, level ? { level } : {});
    return runAgent({
      // Loaded when a site-config is accepted: a waiting agent never evaluates the steps (issue 39).
      steps: async () => (await import('../../steps/index')).STEPS,
      host,
      log,
      env: io.env,
      stateDir: stateDirFrom(args),
      dropDir: stringOpt(args, 'drop-dir') ?? DEFAULT_DROP_DIR,
      labels: [...DEFAULT_LABELS, ...listOpt(args, 'label')],
      kubeconfig: kubeconfigFrom(args),
      once: boolOpt(args, 'once'),
      dryRun: boolOpt(args, 'dry-run'),
      retryNetwork: boolOpt(args, 'retry-network'),
      ...(ingressEndpoint ? { ingressEndpoint } : {}),
      out: io.out,
    });
  },
};
