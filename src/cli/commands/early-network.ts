import { siteConfigAtBoot } from '../../engine/runner';
import { realClock } from '../../engine/clock';
import { earlyNetwork } from '../../network/early';
import { DEFAULT_DROP_DIR, DEFAULT_LABELS } from '../../paths';
import { EXIT_FAILURE, EXIT_OK, listOpt, stringOpt, type Command } from '../command';
import { NODE_OPTIONS, NODE_OPTIONS_HELP, hostFrom, loggerFor, stateDirFrom } from '../common';
import { EARLY_NETWORK_SUMMARY } from './summaries';

export const EARLY_NETWORK_COMMAND = 'early-network';

export const earlyNetworkCommand: Command = {
  name: EARLY_NETWORK_COMMAND,
  summary: EARLY_NETWORK_SUMMARY,
  help: `Usage: sno-reconfigure ${EARLY_NETWORK_COMMAND} [options]

What sno-reconfigure-network.service runs at every boot, after NetworkManager and before nodeip-configuration
and ovs-configuration, while the NIC's own profile is the active one (docs/network.md):
- an attempt at the site network that a power cut or a kill left uncommitted: the node's saved known-good
  network profiles are written back and NetworkManager uses them again, before configure-ovs builds br-ex;
- a site-config (the one in progress, or valid media present now, found and checked as \`run\` does) whose
  network is not committed yet: the network profiles are saved as known good, the site state is applied with
  a checkpoint, its gateway and spec.network.verify are checked, then it is committed or rolled back.
It never waits for media: media that arrive later are taken by \`run\`, which reboots the node for this phase.

Options:
${NODE_OPTIONS_HELP}
  --drop-dir DIR      directory looked at for a site-config (default ${DEFAULT_DROP_DIR})
  --label L           another accepted volume label (repeatable)
  --log-level LEVEL   debug, info (default), warn, error

Exit status: 0 (nothing to do, committed, or rolled back to the known good: \`run\` reports a failed attempt),
1 the known good could not be brought back (call the office), 2 usage.
`,
  options: { ...NODE_OPTIONS, 'drop-dir': { type: 'string' }, label: { type: 'string', multiple: true }, 'log-level': { type: 'string' } },
  async run(args, io) {
    const host = hostFrom(args, io);
    const level = stringOpt(args, 'log-level');
    const log = loggerFor(io, level ? { level } : {});
    const stateDir = stateDirFrom(args);
    try {
      const found = await siteConfigAtBoot({ host, log, env: io.env, stateDir, dropDir: stringOpt(args, 'drop-dir') ?? DEFAULT_DROP_DIR, labels: [...DEFAULT_LABELS, ...listOpt(args, 'label')] });
      const net = found?.site?.resolved.network;
      await earlyNetwork({
        host,
        log,
        stateDir,
        ...(net ? { network: net } : {}),
        internal: found?.internalAddresses ?? [],
        networkTimeoutMs: found?.site?.resolved.timeouts.network ?? 0,
        clock: realClock,
      });
      return EXIT_OK;
    } catch (e) {
      log.error(`the early network phase could not finish: ${(e as Error).message}. Call the office: the node may be on the network of the last attempt; \`sno-reconfigure status\` and the journal on the console say more.`);
      return EXIT_FAILURE;
    }
  },
};
