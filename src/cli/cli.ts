// Command dispatch: `sno-reconfigure <command> [options]`, `--help`, `--version`. Kept thin: each command
// lives in src/cli/commands/ and calls into the modules that do the work.
import { VERSION } from '../version';
import { EXIT_OK, EXIT_USAGE, UsageError, commandOf, parseCommandArgs, type CliIo, type CommandEntry } from './command';
import { COMMANDS } from './commands/index';
import { terminalText } from '../util/screen-text';

export function mainHelp(commands: readonly CommandEntry[] = COMMANDS): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `sno-reconfigure ${VERSION} — reconfigures a relocated Single Node OpenShift at its edge site`,
    '',
    'Usage: sno-reconfigure <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Options:',
    '  --help, -h   show help (also after a command)',
    '  --version    print the version',
    '',
  ].join('\n');
}

/**
 * Everything a command prints goes through here: output quotes media and the cluster (names, values), so any
 * control character other than the lines' own breaks is shown escaped (src/util/screen-text.ts); the texts
 * meant for one line (banner, `status`, the journal) were made single lines where they were composed.
 */
function forPeople(io: CliIo): CliIo {
  return { ...io, out: (s) => io.out(terminalText(s)), err: (s) => io.err(terminalText(s)) };
}

export async function runCli(argv: string[], rawIo: CliIo, commands: readonly CommandEntry[] = COMMANDS): Promise<number> {
  const io = forPeople(rawIo);
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    io.out(mainHelp(commands));
    return first === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (first === '--version' || first === '-v') {
    io.out(`${VERSION}\n`);
    return EXIT_OK;
  }
  const entry = commands.find((c) => c.name === first);
  if (!entry) {
    io.err(`sno-reconfigure: unknown command '${first}'\n\n${mainHelp(commands)}`);
    return EXIT_USAGE;
  }
  const cmd = await commandOf(entry);
  if (cmd.passThrough) return cmd.passThrough(rest, io);
  try {
    const args = parseCommandArgs(cmd, rest);
    if (args.values.help === true) {
      io.out(cmd.help.endsWith('\n') ? cmd.help : `${cmd.help}\n`);
      return EXIT_OK;
    }
    return await cmd.run(args, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`sno-reconfigure ${cmd.name}: ${e.message}\nRun 'sno-reconfigure ${cmd.name} --help' for usage.\n`);
      return EXIT_USAGE;
    }
    throw e;
  }
}
