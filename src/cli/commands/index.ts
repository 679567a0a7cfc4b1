// The command table. Order = order in `--help`.
import type { Command } from '../command';

export const COMMANDS: Command[] = [];
