// The command table of dist/sno-reconfigure-workstation.cjs: the node bundle's, with the commands only a
// workstation runs — `render`, `seal`, `media build` — in place of their hand-offs (commands/workstation.ts).
import type { Command, CommandEntry } from './command';
import { COMMANDS } from './commands/index';
import { mediaCommand } from './commands/media';
import { renderCommand } from './commands/render';
import { sealCommand } from './commands/seal';
import { mediaBuild, mediaCheckManifest } from '../workstation/media-command';
import { MEDIA_HELP } from '../workstation/media-help';

const workstationOnly = new Map<string, Command>([
  ['media', mediaCommand(mediaBuild, mediaCheckManifest, MEDIA_HELP)],
  ['render', renderCommand],
  ['seal', sealCommand],
]);

export const WORKSTATION_COMMANDS: CommandEntry[] = COMMANDS.map((c) => workstationOnly.get(c.name) ?? c);
