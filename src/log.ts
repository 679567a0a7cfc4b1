// Logging for people first. Every line is a sentence: the step (or component) it comes from, what happened, and
// what to do when that applies — `network: site network applied; gateway 192.168.111.1 answered in 3 ms`. When
// stdout is the journal, each line starts with the syslog priority `<N>` so `journalctl -u sno-reconfigure -p err`
// shows errors only (journald strips the prefix; SyslogLevelPrefix= defaults to true); in a terminal, each line
// starts with the time instead.
//
// Machines get the same records as JSON lines — level, time (outside the journal), the child's bindings (step,
// component), the call's fields, msg — with SNO_RECONFIGURE_LOG_FORMAT=json (or `format: 'json'`): the tests, the
// demo and the benchmarks read those. Journal fields (SNO_RECONFIGURE_STEP=…) were measured and left out: Node
// cannot send the journal's native datagrams without a native addon, and `logger --journald` costs a process per
// line (README, "Logging"). `status --json` and report.json are the structured record of a run.
//
// Our own ~100 lines instead of pino: the agent used none of what pino adds over this (transports cannot live
// in a single-file bundle, and the bundle wrote synchronously already), and pino with its serializers,
// redaction and stringify cost 12 KiB of the 200 KiB MachineConfig budget (measured: README, Dependencies).
import { fstatSync, writeSync } from 'node:fs';
import { JOURNAL_LINE_MAX, screenJson, screenLine } from './util/screen-text';
import { officeLine } from './util/remedy';

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

export type LogFormat = 'prose' | 'json';

export interface LoggerOptions {
  level?: string;
  /** Sentences (default) or JSON lines; default from $SNO_RECONFIGURE_LOG_FORMAT. */
  format?: LogFormat;
  env?: NodeJS.ProcessEnv;
  /** Force the `<N>` prefix on or off; by default it is on only when stdout is the journal. */
  journal?: boolean;
  /** Where lines go; defaults to fd 1. Tests pass a collector. */
  write?: (line: string) => void;
}

/** Keys whose values must never reach the journal (pull secrets, private keys, tokens), at any depth. */
export const REDACTED_KEYS = ['pullSecret', 'auths', 'auth', 'password', 'token', 'key', 'privateKey'];
const REDACTED = new Set(REDACTED_KEYS);

/** 850 ms, 3.2 s, 6.5 min: the one number a person needs from a duration field. */
export function humanDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/**
 * One sentence from a record: "<step>: <msg>", then what the fields add that a person acts on — the error
 * (when the message does not already say it), what to do, when the next try is. The other fields are for the
 * JSON format. One line always: journald would make every line of a multi-line text an entry of its own, and
 * the text may quote media (a file name with a newline or ESC in it), so every control character is shown
 * escaped and the line is bounded (src/util/screen-text.ts); a tool's output arrives joined with " | ".
 */
function sentence(bound: Record<string, unknown>, fields: Record<string, unknown>, msg: string | undefined): string {
  const source = bound.step ?? bound.component;
  const err = fields.err as { message?: unknown } | string | undefined;
  const errText = typeof err === 'string' ? err : typeof err?.message === 'string' ? err.message : undefined;
  const retry = fields.retryInMs ?? fields.delayMs;
  const text = [
    `${source ? `${String(source)}: ` : ''}${msg ?? ''}`,
    errText && !(msg ?? '').includes(errText) ? ` (${errText})` : '',
    typeof retry === 'number' ? `; next try in ${humanDuration(retry)}` : '',
    typeof fields.remedy === 'string' ? `. What to do: ${fields.remedy}` : '',
    typeof fields.office === 'string' ? ` ${officeLine(fields.office)}` : '',
  ].join('');
  return screenLine(text, JOURNAL_LINE_MAX);
}

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
  const format = opts.format ?? env.SNO_RECONFIGURE_LOG_FORMAT ?? 'prose';
  if (format !== 'prose' && format !== 'json') throw new Error(`log format "${format}": expected prose or json`);

  const make = (bindings: Record<string, unknown>): Logger => {
    // A child's bindings are fixed: made safe once, not on every line.
    const bound = safe(bindings) as Record<string, unknown>;
    const at = (level: LevelName): LogFn => (fieldsOrMsg, msg) => {
      if (LEVELS[level] < threshold) return;
      const fields = typeof fieldsOrMsg === 'string' ? {} : (fieldsOrMsg ?? {});
      const text = typeof fieldsOrMsg === 'string' ? fieldsOrMsg : msg;
      const safeFields = safe(fields) as Record<string, unknown>;
      const time = journal ? undefined : new Date().toISOString();
      const line =
        format === 'json'
          ? screenJson(JSON.stringify({ level, ...(time ? { time } : {}), ...bound, ...safeFields, ...(text !== undefined ? { msg: text } : {}) }))
          : `${time ? `${time.slice(0, 19).replace('T', ' ')} ` : ''}${journal || level === 'info' ? '' : `${level.toUpperCase()} `}${sentence(bound, safeFields, text)}`;
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
