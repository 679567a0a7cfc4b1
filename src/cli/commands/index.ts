// The command table. Order = order in `--help`.
import type { Command } from '../command';
import { runCommand } from './run';
import { planCommand } from './plan';
import { statusCommand } from './status';
import { renderCommand } from './render';
import { prepareCommand } from './prepare';
import { validateCommand } from './validate';
import { renewCertificatesCommand } from './renew-certificates';
import { sealCommand } from './seal';
import { mediaCommand } from './media';

export const COMMANDS: Command[] = [runCommand, validateCommand, planCommand, statusCommand, renewCertificatesCommand, renderCommand, prepareCommand, sealCommand, mediaCommand()];
