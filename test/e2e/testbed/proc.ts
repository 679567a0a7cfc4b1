// Running host commands for the testbed: captured output, a deadline, and the whole process group killed on
// timeout (nsenter forks into the machine's PID namespace: killing only nsenter would leave its child running).
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Set when the command was killed (its deadline passed, or a signal from elsewhere). */
  signal?: string;
}

export interface RunOptions {
  input?: string | Buffer;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export class CommandError extends Error {
  constructor(readonly argv: readonly string[], readonly result: RunResult) {
    super(`${argv.join(' ')} failed (${result.signal ? `killed by ${result.signal}` : `exit ${result.code}`}): ${(result.stderr.trim() || result.stdout.trim()).slice(-2000) || 'no output'}`);
    this.name = 'CommandError';
  }
}

/** Runs argv; never throws for a non-zero exit (see runOk). Spawn failures come back as code 127. */
export function run(argv: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const [file, ...args] = argv;
  if (!file) throw new Error('run: empty argv');
  return new Promise((resolve) => {
    const child = spawn(file, args, { env: opts.env ?? process.env, cwd: opts.cwd, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, opts.timeoutMs ?? 60_000);
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.stdin.on('error', () => undefined); // the command may exit without reading its input
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ code: 127, stdout: '', stderr: `${file}: ${e.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stderr = Buffer.concat(err).toString('utf8') + (timedOut ? `\n[testbed] ${argv.join(' ')}: killed after ${opts.timeoutMs ?? 60_000} ms` : '');
      resolve({ code: code ?? 128, stdout: Buffer.concat(out).toString('utf8'), stderr, ...(signal ? { signal } : {}) });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** Like run, but a non-zero exit throws a CommandError naming the command and its output. */
export async function runOk(argv: readonly string[], opts: RunOptions = {}): Promise<string> {
  const res = await run(argv, opts);
  if (res.code !== 0) throw new CommandError(argv, res);
  return res.stdout;
}

function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns a value other than undefined, or throws `onTimeout()` after `timeoutMs`. */
export async function pollUntil<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number, onTimeout: () => Error | Promise<Error>, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() >= deadline) throw await onTimeout();
    await sleep(intervalMs);
  }
}

/** True while `pid` exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // state is the field after the parenthesised command name (which may itself contain spaces)
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The PID namespace of a process, e.g. `pid:[4026532181]`; undefined when it is gone. */
export function pidNamespaceOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
}

/** Host PIDs of the live processes in PID namespace `ns`. */
export function processesInNamespace(ns: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pidNamespaceOf(pid) === ns && isAlive(pid)) pids.push(pid);
  }
  return pids;
}

/** Direct children of `pid` (the kernel's list for its main thread). */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
