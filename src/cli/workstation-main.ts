// Entry point of dist/sno-reconfigure-workstation.cjs: every command of the node's bundle, and the ones only a
// workstation needs — `render`, `seal`, `media build` (src/workstation/) — which the node bundle hands over
// (src/cli/commands/workstation.ts). Kept out of the node bundle, whose size rides in a MachineConfig (DESIGN.md section 6).
import { runCli } from './cli';
import { WORKSTATION_COMMANDS } from './workstation-commands';

runCli(process.argv.slice(2), { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s), env: process.env, cwd: process.cwd() }, WORKSTATION_COMMANDS).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`sno-reconfigure: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
