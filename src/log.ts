// Logging: one JSON object per line — level, time (outside the journal), the child's bindings (step,
// component), the call's fields, msg — the format pino writes, which every reader of ours (status, tests,
// the e2e journal reader) parses. When stdout is the journal, every line starts with the syslog priority
// `<N>` so `journalctl -u sno-reconfigure -p err` shows errors only (journald strips the prefix,
// SyslogLevelPrefix= defaults to true).
//
// Our own ~80 lines instead of pino: the agent used none of what pino adds over this (transports cannot live
// in a single-file bundle, and the bundle wrote synchronously already), and pino with its serializers,
// redaction and stringify cost 12 KiB of the 200 KiB MachineConfig budget (measured: README, Dependencies).
import { fstatSync, writeSync } from 'node:fs';

const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity } as const;
type LevelName = Exclude<keyof typeof LEVELS, 'silent'>;
const PRIORITY_BY_LEVEL: Record<LevelName, number> = { fatal: 2, error: 3, warn: 4, info: 6, debug: 7, trace: 7 };

type LogFn = (fieldsOrMsg?: Record<string, unknown> | string, msg?: string) => void;

export interface Logger {
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  /** A logger whose every line also carries `bindings` (e.g. { step: 'network' }). */
  child(bindings: Record<string, unknown>): Logger;
}

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

export interface LoggerOptions {
  level?: string;
  env?: NodeJS.ProcessEnv;
  /** Force the `<N>` prefix on or off; by default it is on only when stdout is the journal. */
  journal?: boolean;
  /** Where lines go; defaults to fd 1. Tests pass a collector. */
  write?: (line: string) => void;
}

/** Keys whose values must never reach the journal (pull secrets, private keys, tokens), at any depth. */
export const REDACTED_KEYS = ['pullSecret', 'auths', 'auth', 'password', 'token', 'key', 'privateKey'];
const REDACTED = new Set(REDACTED_KEYS);

/** Fields as they are written: secrets replaced, errors as {type, message, stack}. */
function safe(value: unknown, depth = 0): unknown {
  if (value instanceof Error) return { type: value.name, message: value.message, ...(value.stack ? { stack: value.stack } : {}) };
  if (value === null || typeof value !== 'object' || depth > 8) return value;
  if (Array.isArray(value)) return value.map((v) => safe(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = REDACTED.has(k) ? '[redacted]' : safe(v, depth + 1);
  return out;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const env = opts.env ?? process.env;
  const journal = opts.journal ?? stdoutIsJournal(env);
  const write = opts.write ?? ((s: string) => void writeSync(1, s));
  const wanted = opts.level ?? env.SNO_RECONFIGURE_LOG_LEVEL ?? 'info';
  if (!(wanted in LEVELS)) throw new Error(`log level "${wanted}": expected one of ${Object.keys(LEVELS).join(', ')}`);
  const threshold = LEVELS[wanted as keyof typeof LEVELS];

  const make = (bindings: Record<string, unknown>): Logger => {
    // A child's bindings are fixed: made safe once, not on every line.
    const bound = safe(bindings) as object;
    const at = (level: LevelName): LogFn => (fieldsOrMsg, msg) => {
      if (LEVELS[level] < threshold) return;
      const fields = typeof fieldsOrMsg === 'string' ? {} : (fieldsOrMsg ?? {});
      const text = typeof fieldsOrMsg === 'string' ? fieldsOrMsg : msg;
      const line = JSON.stringify({ level, ...(journal ? {} : { time: new Date().toISOString() }), ...bound, ...(safe(fields) as object), ...(text !== undefined ? { msg: text } : {}) });
      write(`${journal ? `<${PRIORITY_BY_LEVEL[level]}>` : ''}${line}\n`);
    };
    return {
      trace: at('trace'),
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
      fatal: at('fatal'),
      child: (more) => make({ ...bindings, ...more }),
    };
  };
  return make({});
}
