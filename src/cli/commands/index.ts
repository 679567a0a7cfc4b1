// The command table. Order = order in `--help`.
import type { Command } from '../command';
import { runCommand } from './run';
import { planCommand } from './plan';
import { statusCommand } from './status';
import { prepareCommand } from './prepare';
import { validateCommand } from './validate';
import { renewCertificatesCommand } from './renew-certificates';
import { mediaCommand } from './media';
import { workstationCommand } from './workstation';
import { earlyNetworkCommand } from './early-network';

// render and seal run on a workstation: the node bundle hands them to the workstation bundle (./workstation.ts).
export const RENDER_SUMMARY = 'print the factory MachineConfig that installs this agent';
export const SEAL_SUMMARY = "workstation: encrypt site-config files to one node's key (X becomes X.sealed)";
/** render embeds the bundle that handed it over (the node bundle), unless --bundle says otherwise. */
const embedSelf = (argv: string[]): string[] => (argv.some((a) => a === '--bundle' || a.startsWith('--bundle=')) || !process.argv[1] ? [] : ['--bundle', process.argv[1]]);

export const COMMANDS: Command[] = [
  runCommand,
  validateCommand,
  planCommand,
  statusCommand,
  renewCertificatesCommand,
  workstationCommand('render', RENDER_SUMMARY, embedSelf),
  prepareCommand,
  earlyNetworkCommand,
  workstationCommand('seal', SEAL_SUMMARY),
  mediaCommand(),
];
