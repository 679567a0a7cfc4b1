// The command table. Order = order in `--help`. A command's module loads when it is run: `--version`, `--help`
// and an unknown command evaluate none of them, and each command only what it imports (issue 39).
import type { CommandEntry } from '../command';
import { workstationCommand } from './workstation';
import { EARLY_NETWORK_SUMMARY, MEDIA_SUMMARY, PLAN_SUMMARY, PREPARE_SUMMARY, RENDER_SUMMARY, RENEW_SUMMARY, RUN_SUMMARY, SEAL_SUMMARY, STATUS_SUMMARY, VALIDATE_SUMMARY } from './summaries';

export { RENDER_SUMMARY, SEAL_SUMMARY };

/** render embeds the bundle that handed it over (the node bundle), unless --bundle says otherwise. */
const embedSelf = (argv: string[]): string[] => (argv.some((a) => a === '--bundle' || a.startsWith('--bundle=')) || !process.argv[1] ? [] : ['--bundle', process.argv[1]]);

export const COMMANDS: CommandEntry[] = [
  { name: 'run', summary: RUN_SUMMARY, load: async () => (await import('./run')).runCommand },
  { name: 'validate', summary: VALIDATE_SUMMARY, load: async () => (await import('./validate')).validateCommand },
  { name: 'plan', summary: PLAN_SUMMARY, load: async () => (await import('./plan')).planCommand },
  { name: 'status', summary: STATUS_SUMMARY, load: async () => (await import('./status')).statusCommand },
  { name: 'renew-certificates', summary: RENEW_SUMMARY, load: async () => (await import('./renew-certificates')).renewCertificatesCommand },
  workstationCommand('render', RENDER_SUMMARY, embedSelf),
  { name: 'prepare', summary: PREPARE_SUMMARY, load: async () => (await import('./prepare')).prepareCommand },
  { name: 'early-network', summary: EARLY_NETWORK_SUMMARY, load: async () => (await import('./early-network')).earlyNetworkCommand },
  workstationCommand('seal', SEAL_SUMMARY),
  { name: 'media', summary: MEDIA_SUMMARY, load: async () => (await import('./media')).mediaCommand() },
];
