// Command dispatch: `sno-reconfigure <command> [options]`, `--help`, `--version`. Kept thin: each command
// lives in src/cli/commands/ and calls into the modules that do the work.
import { VERSION } from '../version';
import { EXIT_OK, EXIT_USAGE, UsageError, parseCommandArgs, type CliIo, type Command } from './command';
import { COMMANDS } from './commands/index';

export function mainHelp(commands: readonly Command[] = COMMANDS): string {
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

export async function runCli(argv: string[], io: CliIo, commands: readonly Command[] = COMMANDS): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    io.out(mainHelp(commands));
    return first === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (first === '--version' || first === '-v') {
    io.out(`${VERSION}\n`);
    return EXIT_OK;
  }
  const cmd: Command | undefined = commands.find((c) => c.name === first);
  if (!cmd) {
    io.err(`sno-reconfigure: unknown command '${first}'\n\n${mainHelp(commands)}`);
    return EXIT_USAGE;
  }
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
