// Entry point of dist/sno-reconfigure-workstation.cjs: every command of the node's bundle, and `media build`,
// which only a workstation needs (src/workstation/). Kept out of the node bundle, whose size rides in a
// MachineConfig (DESIGN.md section 6).
import { runCli } from './cli';
import { COMMANDS } from './commands/index';
import { mediaCommand } from './commands/media';
import { mediaBuild } from '../workstation/media-command';

const commands = COMMANDS.map((c) => (c.name === 'media' ? mediaCommand(mediaBuild) : c));

runCli(process.argv.slice(2), { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s), env: process.env, cwd: process.cwd() }, commands).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`sno-reconfigure: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
