// Logging: pino without transports (transports need worker files, impossible in a single-file bundle;
// reference/runtime-libs.md section 3). When stdout is the journal, every line starts with the syslog
// priority `<N>` so `journalctl -u sno-reconfigure -p err` shows errors only (journald strips the prefix,
// SyslogLevelPrefix= defaults to true).
import { fstatSync, writeSync } from 'node:fs';
import pino, { type Logger, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

const PRIORITY_BY_LEVEL: Record<number, number> = { 60: 2, 50: 3, 40: 4, 30: 6, 20: 7, 10: 7 };

/** True when fd 1 is the journal stream systemd gave us ($JOURNAL_STREAM is "dev:ino" of that socket). */
export function stdoutIsJournal(env: NodeJS.ProcessEnv = process.env, fd = 1): boolean {
  const stream = env.JOURNAL_STREAM;
  if (!stream) return false;
  const [dev, ino] = stream.split(':');
  try {
    const st = fstatSync(fd);
    return String(st.dev) === dev && String(st.ino) === ino;
  } catch {
    return false;
  }
}

interface MetadataStream extends DestinationStream {
  lastLevel: number;
}

/** A synchronous destination that prefixes each line with `<priority>` (pino sets lastLevel before write). */
export function journalDestination(fd = 1, write: (s: string) => void = (s) => { writeSync(fd, s); }): DestinationStream {
  const stream: MetadataStream & { [k: symbol]: boolean } = {
    lastLevel: 30,
    write(line: string) {
      write(`<${PRIORITY_BY_LEVEL[this.lastLevel] ?? 6}>${line}`);
    },
  };
  stream[Symbol.for('pino.metadata')] = true;
  return stream;
}

export interface LoggerOptions {
  level?: string;
  env?: NodeJS.ProcessEnv;
  /** Force the `<N>` prefix on or off; by default it is on only when stdout is the journal. */
  journal?: boolean;
  /** Where lines go; defaults to fd 1. Tests pass a collector. */
  write?: (line: string) => void;
}

/** Keys whose values must never reach the journal (pull secrets, private keys, tokens). */
export const REDACTED_KEYS = ['pullSecret', 'auths', 'auth', 'password', 'token', 'key', 'privateKey', '*.pullSecret', '*.auths', '*.password', '*.token', '*.privateKey'];

export function createLogger(opts: LoggerOptions = {}): Logger {
  const env = opts.env ?? process.env;
  const journal = opts.journal ?? stdoutIsJournal(env);
  const write = opts.write ?? ((s: string) => { writeSync(1, s); });
  const dest: DestinationStream = journal ? journalDestination(1, write) : { write };
  return pino(
    {
      level: opts.level ?? env.SNO_RECONFIGURE_LOG_LEVEL ?? 'info',
      base: undefined,
      timestamp: journal ? false : pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_KEYS, censor: '[redacted]' },
    },
    dest,
  );
}
