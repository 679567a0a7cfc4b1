// One failed host command, described one way everywhere: "`systemctl enable x.service` failed (exit 1): …",
// as execa does (sindresorhus/execa main, lib/return/message.js: prefix, escaped command, then the tail of
// the command's own error output). The tail is what a technician needs; the full output goes nowhere else.
import type { CommandResult } from './host';

/** How many lines of the command's error output a message keeps. */
const TAIL_LINES = 6;

export interface CommandErrorOptions {
  /** The command line as people should read it, when the full argument list would only add clutter (file paths). */
  shown?: string;
  cause?: unknown;
}

export class CommandError extends Error {
  readonly exitCode: number;
  readonly signal?: string;
  /** The last lines of stderr (stdout when stderr was empty), joined with " | "; "no output" when both were empty. */
  readonly outputTail: string;

  constructor(
    readonly command: string,
    readonly args: readonly string[],
    result: CommandResult,
    options: CommandErrorOptions = {},
  ) {
    const tail = outputTail(result);
    super(`${options.shown ?? [command, ...args].join(' ')} failed (${howItEnded(result)}): ${tail}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CommandError';
    this.exitCode = result.code;
    if (result.signal) this.signal = result.signal;
    this.outputTail = tail;
  }

  /** "exit 1: <tail>" — for a sentence that already names the command. */
  get detail(): string {
    return `${howItEnded({ code: this.exitCode, ...(this.signal ? { signal: this.signal } : {}) })}: ${this.outputTail}`;
  }
}

function howItEnded(result: Pick<CommandResult, 'code' | 'signal'>): string {
  return result.signal ? `killed by ${result.signal}` : `exit ${result.code}`;
}

function outputTail(result: Pick<CommandResult, 'stderr' | 'stdout'>): string {
  const text = (result.stderr.trim() || result.stdout.trim());
  return text.split('\n').map((line) => line.trim()).filter(Boolean).slice(-TAIL_LINES).join(' | ') || 'no output';
}
