// Workstation commands in the node bundle. The node bundle rides in a MachineConfig (<= 200 KiB, DESIGN.md
// section 6), so commands only a workstation runs — `render machineconfig` (before the node exists),
// `seal` and `media build` — live in dist/sno-reconfigure-workstation.cjs (src/cli/workstation-main.ts). The
// node bundle hands them to that file when it is beside it (dist/ holds both), with the same arguments, or says
// where to find one. Moving render and seal out freed 16 KiB of the budget (npm run bench, 2026-11-25).
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { LocalHost } from '../../host/host';
import { EXIT_FAILURE, type CliIo, type Command } from '../command';

export const WORKSTATION_BUNDLE = 'sno-reconfigure-workstation.cjs';
export const NODE_BUNDLE = 'sno-reconfigure.cjs';

/** Runs `sno-reconfigure <command> <argv>` with the workstation bundle beside this one. */
export async function handOff(io: CliIo, command: string, argv: string[]): Promise<number> {
  const sibling = path.join(path.dirname(process.argv[1] ?? ''), WORKSTATION_BUNDLE);
  if (!(await new LocalHost({ root: '/' }).exists(sibling))) {
    io.err(`sno-reconfigure ${command}: a workstation command, not part of the node's agent: run it from a clone of the project (npm run cli -- ${command} …), or with ${WORKSTATION_BUNDLE} from the same build\n`);
    return EXIT_FAILURE;
  }
  const res = spawnSync(process.execPath, [sibling, command, ...argv], { stdio: 'inherit', cwd: io.cwd, env: io.env });
  return res.status ?? EXIT_FAILURE;
}

/**
 * The node bundle's entry for a workstation command: everything after the command name goes to the
 * workstation bundle unparsed (its own --help included). `extraArgs` adds what the hand-off must keep true,
 * e.g. that `render` embeds the node bundle, not the workstation bundle that runs it.
 */
export function workstationCommand(name: string, summary: string, extraArgs: (argv: string[]) => string[] = () => []): Command {
  return {
    name,
    summary,
    help: `sno-reconfigure ${name} is a workstation command: run it with ${WORKSTATION_BUNDLE} beside this program.`,
    options: {},
    run: () => Promise.resolve(EXIT_FAILURE),
    passThrough: (argv, io) => handOff(io, name, [...argv, ...extraArgs(argv)]),
  };
}

/** The bundle `render machineconfig` embeds when --bundle is not given: the node bundle, even when the workstation bundle runs. */
export function defaultBundlePath(): string | undefined {
  const self = process.argv[1];
  if (!self) return undefined;
  return path.basename(self) === WORKSTATION_BUNDLE ? path.join(path.dirname(self), NODE_BUNDLE) : self;
}
