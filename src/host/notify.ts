// sd_notify through the host's `systemd-notify` (reference/runtime-libs.md section 2): Node has no AF_UNIX
// datagram sockets, and the npm wrappers cannot send WATCHDOG=/EXTEND_TIMEOUT_USEC= and force --pid.
// The blocking form (no --no-block) waits on the barrier (systemd >= 246), so PID 1 never drops a message
// because the sender exited first. Never pass --pid: it would send MAINPID=<systemd-notify's pid>.
import { screenLine } from '../util/screen-text';
import type { Host } from './host';
import type { Logger } from '../log';

export interface Notifier {
  readonly enabled: boolean;
  ready(status?: string): Promise<void>;
  status(text: string): Promise<void>;
  extendTimeout(ms: number): Promise<void>;
  stopping(): Promise<void>;
  /** Marks the main loop as alive; the watchdog only pings systemd while this keeps happening. */
  alive(): void;
  /** Starts the watchdog timer when systemd asked for one ($WATCHDOG_USEC). */
  startWatchdog(): void;
  close(): Promise<void>;
}

export interface NotifierOptions {
  host: Host;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  /** How long the main loop may stay silent before the watchdog stops pinging (then systemd restarts us). */
  staleAfterMs?: number;
  now?: () => number;
}

export function createNotifier(opts: NotifierOptions): Notifier {
  const env = opts.env ?? process.env;
  const now = opts.now ?? Date.now;
  const enabled = Boolean(env.NOTIFY_SOCKET);
  const watchdogUsec = Number(env.WATCHDOG_USEC ?? 0);
  // WATCHDOG_PID names the process systemd expects pings for; another process must not ping in its place.
  const watchdogForUs = !env.WATCHDOG_PID || Number(env.WATCHDOG_PID) === process.pid || env.SNO_RECONFIGURE_IGNORE_WATCHDOG_PID === '1';
  const staleAfterMs = opts.staleAfterMs ?? 10 * 60_000;
  let chain: Promise<void> = Promise.resolve();
  let lastAlive = now();
  let timer: NodeJS.Timeout | undefined;
  let lastStatus = '';
  let readySent = false;

  const send = (vars: string[]): Promise<void> => {
    if (!enabled) return Promise.resolve();
    // Serialized: systemd-notify calls must not overtake each other (STATUS order matters to readers).
    chain = chain.then(async () => {
      const res = await opts.host.run('systemd-notify', vars, { timeoutMs: 10_000 });
      if (res.code !== 0) opts.log.debug({ vars: vars.map((v) => v.split('=')[0]), code: res.code, stderr: res.stderr.trim() }, 'systemd-notify failed');
    });
    return chain;
  };

  return {
    enabled,
    ready: (status) => {
      readySent = true;
      return send(status ? ['READY=1', `STATUS=${oneLine(status)}`] : ['READY=1']);
    },
    status: (text) => {
      const line = oneLine(text);
      if (line === lastStatus) return Promise.resolve();
      lastStatus = line;
      return send([`STATUS=${line}`]);
    },
    // Only before READY=1: once running there is no start timeout left to extend, and systemd applies the
    // extension to the watchdog too (src/core/service.c, service_extend_timeout()), so a hang right after a
    // long wait began would go unnoticed for the whole extension.
    extendTimeout: (ms) => (readySent ? Promise.resolve() : send([`EXTEND_TIMEOUT_USEC=${Math.round(ms * 1000)}`])),
    stopping: () => send(['STOPPING=1']),
    alive: () => {
      lastAlive = now();
    },
    startWatchdog: () => {
      if (!enabled || watchdogUsec <= 0 || !watchdogForUs || timer) return;
      const intervalMs = Math.max(500, Math.floor(watchdogUsec / 1000 / 2));
      timer = setInterval(() => {
        if (now() - lastAlive > staleAfterMs) {
          opts.log.error({ silentForMs: now() - lastAlive }, 'main loop made no progress; not pinging the watchdog so systemd restarts the agent');
          return;
        }
        void send(['WATCHDOG=1']);
      }, intervalMs);
      timer.unref();
    },
    close: async () => {
      if (timer) clearInterval(timer);
      timer = undefined;
      await chain;
    },
  };
}

/** `systemctl status` shows STATUS= to people: one line, control characters escaped (src/util/screen-text.ts). */
function oneLine(text: string): string {
  return screenLine(text.replace(/[ \t]+/g, ' ').trim(), 500);
}
