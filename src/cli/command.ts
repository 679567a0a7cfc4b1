// What every command of the CLI contract (DESIGN.md section 3) looks like, and how its arguments are parsed.
import { parseArgs } from 'node:util';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export type OptionSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string; default?: string | boolean | string[] }>;

export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

export interface Command {
  name: string;
  summary: string;
  /** Full help text printed by `--help`. */
  help: string;
  options: OptionSpec;
  run(args: ParsedArgs, io: CliIo): Promise<number>;
  /** Takes the arguments unparsed instead of `run` (a command handed to another program). */
  passThrough?(argv: string[], io: CliIo): Promise<number>;
}

/** A command named in the table whose module loads only when it is run (src/cli/commands/index.ts). */
export interface LazyCommand {
  name: string;
  summary: string;
  load(): Promise<Command>;
}

export type CommandEntry = Command | LazyCommand;

export const commandOf = async (entry: CommandEntry): Promise<Command> => ('load' in entry ? entry.load() : entry);

/** A mistake in how the command was called: printed with a hint, exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export function parseCommandArgs(cmd: Command, argv: string[]): ParsedArgs {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: { ...cmd.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
    return { values: values as ParsedArgs['values'], positionals };
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

export function stringOpt(args: ParsedArgs, name: string): string | undefined {
  const v = args.values[name];
  return typeof v === 'string' ? v : undefined;
}

export function boolOpt(args: ParsedArgs, name: string): boolean {
  return args.values[name] === true;
}

export function listOpt(args: ParsedArgs, name: string): string[] {
  const v = args.values[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}
