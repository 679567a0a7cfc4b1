#!/usr/bin/node
// Stand-in for nmstatectl (nmstate is not packaged for Debian 12), installed as /usr/bin/nmstatectl in the
// testbed rootfs. It changes no real interface: it keeps "the network state" as the text last applied,
// records every call, and can be told to fail. Command line and outputs follow nmstatectl 2.x
// (nmstate/nmstate rust/src/cli/ncl.rs and apply.rs): `apply [FILE...|-]` reads stdin without a file and
// prints the applied state; `--no-commit` keeps a checkpoint that NetworkManager rolls back by itself after
// `--timeout` seconds (default 60, query_apply/net_state.rs DEFAULT_ROLLBACK_TIMEOUT); `commit` and
// `rollback` without an argument act on the pending checkpoint and print its path; errors go to stderr
// with exit 1, usage errors exit 2 (clap).
//
// Files (each directory can be moved with an environment variable, for tests on the host):
//   NMSTATE_STANDIN_STATE (/etc/nmstate-standin): current.yaml, the applied state, persistent like NM's
//     profiles; `fail`, lines `VERB [once] EXIT MESSAGE` (VERB: apply|commit|rollback|show|*) that make
//     the next matching call print MESSAGE to stderr and exit EXIT (`once`: the line is then removed);
//     `hold-commit`: while it exists, `commit` waits before it commits (at most 5 minutes) — a test cuts the
//     power in that window, between the checkpoint and its commit, without racing the agent.
//   NMSTATE_STANDIN_RUN (/run/nmstate-standin): checkpoint.json. NetworkManager keeps checkpoints in
//     memory, so a reboot loses a pending checkpoint and the uncommitted state stays: /run is tmpfs.
//   NMSTATE_STANDIN_LOG (/var/log/nmstate-standin/calls.jsonl): one JSON line per call:
//     {time, argv, input?, exit, checkpoint?, event?}; automatic rollbacks are logged as events.
// The automatic rollback is applied when the stand-in next runs (any command), since there is no daemon.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const STATE_DIR = process.env.NMSTATE_STANDIN_STATE || '/etc/nmstate-standin';
const RUN_DIR = process.env.NMSTATE_STANDIN_RUN || '/run/nmstate-standin';
const LOG_FILE = process.env.NMSTATE_STANDIN_LOG || '/var/log/nmstate-standin/calls.jsonl';
const CURRENT = path.join(STATE_DIR, 'current.yaml');
const FAIL = path.join(STATE_DIR, 'fail');
const CHECKPOINT = path.join(RUN_DIR, 'checkpoint.json');
const COUNTER = path.join(RUN_DIR, 'counter');
const DEFAULT_TIMEOUT = 60;
const INITIAL_STATE = 'interfaces:\n- name: lo\n  type: loopback\n  state: up\n';

const argv = process.argv.slice(2);
const record = { time: new Date().toISOString(), argv };

function log(entry) {
  fs.mkdirSync(path.dirname(LOG_FILE), { recursive: true });
  fs.appendFileSync(LOG_FILE, `${JSON.stringify(entry)}\n`);
}

function exit(code, out, err) {
  if (out) process.stdout.write(out.endsWith('\n') ? out : `${out}\n`);
  if (err) process.stderr.write(err.endsWith('\n') ? err : `${err}\n`);
  log({ ...record, exit: code, ...(code !== 0 && err ? { error: err.trim() } : {}) });
  process.exit(code);
}

function info(msg) {
  process.stderr.write(`[${new Date().toISOString()} INFO  nmstate::query_apply::net_state] ${msg}\n`);
}

function writeAtomic(file, data) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  fs.writeSync(fd, data);
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(tmp, file);
}

function readCurrent() {
  try {
    return fs.readFileSync(CURRENT, 'utf8');
  } catch {
    return INITIAL_STATE;
  }
}

function readCheckpoint() {
  try {
    return JSON.parse(fs.readFileSync(CHECKPOINT, 'utf8'));
  } catch {
    return undefined;
  }
}

function nextCheckpointPath() {
  let n = 0;
  try {
    n = Number(fs.readFileSync(COUNTER, 'utf8')) || 0;
  } catch {
    // first checkpoint of this boot
  }
  n += 1;
  writeAtomic(COUNTER, String(n));
  return `/org/freedesktop/NetworkManager/Checkpoint/${n}`;
}

/** NetworkManager's own timer: a checkpoint not committed in time is rolled back. */
function expireCheckpoint() {
  const cp = readCheckpoint();
  if (!cp) return;
  if (Date.now() < cp.created + cp.timeoutSec * 1000) return;
  writeAtomic(CURRENT, cp.previous);
  fs.rmSync(CHECKPOINT, { force: true });
  log({ time: new Date().toISOString(), event: 'auto-rollback', checkpoint: cp.path, afterSec: cp.timeoutSec });
}

/** The first `fail` line for this verb: {exit, message}; removes it when marked `once`. */
function injectedFailure(verb) {
  let lines;
  try {
    lines = fs.readFileSync(FAIL, 'utf8').split('\n');
  } catch {
    return undefined;
  }
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*(\S+)\s+(?:(once)\s+)?(\d+)\s*(.*)$/.exec(lines[i]);
    if (!m || (m[1] !== verb && m[1] !== '*')) continue;
    if (m[2]) {
      lines.splice(i, 1);
      writeAtomic(FAIL, lines.join('\n'));
    }
    return { exit: Number(m[3]), message: m[4] || `NmstateError: injected ${verb} failure` };
  }
  return undefined;
}

function parseOptions(args, valued) {
  const opts = {};
  const positional = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-' || !a.startsWith('-')) positional.push(a);
    else if (valued.includes(a)) {
      if (i + 1 >= args.length) exit(2, '', `error: a value is required for '${a} <${a.slice(2).toUpperCase()}>' but none was supplied`);
      opts[a] = args[++i];
    } else if (a.includes('=') && valued.includes(a.split('=')[0])) opts[a.split('=')[0]] = a.slice(a.indexOf('=') + 1);
    else opts[a] = true;
  }
  return { opts, positional };
}

function readStdin() {
  try {
    return fs.readFileSync(0, 'utf8');
  } catch {
    return '';
  }
}

function apply(args) {
  const known = ['--no-commit', '--timeout', '--no-verify', '-k', '--kernel', '--memory-only', '-s', '--show-secrets', '-v', '-q'];
  const { opts, positional } = parseOptions(args, ['--timeout']);
  for (const o of Object.keys(opts)) if (!known.includes(o)) exit(2, '', `error: unexpected argument '${o}' found`);
  let timeoutSec = DEFAULT_TIMEOUT;
  if (opts['--timeout'] !== undefined) {
    if (!/^\d+$/.test(String(opts['--timeout']))) exit(65, '', `NmstateError: InvalidArgument: invalid digit found in string: --timeout ${opts['--timeout']}`);
    timeoutSec = Number(opts['--timeout']);
  }
  let input;
  if (positional.length === 0 || positional[0] === '-') input = readStdin();
  else {
    try {
      input = positional.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
    } catch (e) {
      exit(1, '', `NmstateError: Bug: ${e.message}`);
    }
  }
  record.input = input;
  if (!input.trim()) exit(1, '', 'NmstateError: InvalidArgument: Provide file is not valid NetworkState or NetworkPolicy: empty state');
  const failure = injectedFailure('apply');
  if (failure) {
    // nmstate rolls its own checkpoint back on any failure (with_nm_checkpoint): the state is unchanged.
    info('Rollbacked to checkpoint (injected failure)');
    exit(failure.exit, '', failure.message);
  }
  const noCommit = opts['--no-commit'] === true;
  if (noCommit && readCheckpoint()) {
    exit(1, '', 'NmstateError: Bug: Failed to create checkpoint: a checkpoint already exists for these devices (commit or rollback it first)');
  }
  const previous = readCurrent();
  if (noCommit) {
    const cpPath = nextCheckpointPath();
    writeAtomic(CHECKPOINT, JSON.stringify({ path: cpPath, created: Date.now(), timeoutSec, previous }));
    record.checkpoint = cpPath;
    info(`Created checkpoint ${cpPath}`);
    writeAtomic(CURRENT, input);
    info(`Skipping commit for checkpoint ${cpPath}`);
  } else {
    writeAtomic(CURRENT, input);
  }
  exit(0, input, '');
}

/** Sleeps while `file` exists (polling every 100 ms), at most `maxMs`. */
function waitWhileExists(file, maxMs) {
  const until = Date.now() + maxMs;
  const cell = new Int32Array(new SharedArrayBuffer(4));
  while (fs.existsSync(file) && Date.now() < until) Atomics.wait(cell, 0, 0, 100);
}

function commitOrRollback(verb, args) {
  if (verb === 'commit') waitWhileExists(path.join(STATE_DIR, 'hold-commit'), 5 * 60_000);
  const { positional } = parseOptions(args, []);
  const cp = readCheckpoint();
  const wanted = positional[0];
  if (!cp || (wanted && wanted !== cp.path)) {
    exit(1, '', `NmstateError: NotFoundError: No checkpoint ${wanted ? `${wanted} ` : ''}found to ${verb}`);
  }
  record.checkpoint = cp.path;
  const failure = injectedFailure(verb);
  if (failure) exit(failure.exit, '', failure.message);
  if (verb === 'rollback') writeAtomic(CURRENT, cp.previous);
  fs.rmSync(CHECKPOINT, { force: true });
  exit(0, cp.path, '');
}

function show(args) {
  const { opts } = parseOptions(args, []);
  const failure = injectedFailure('show');
  if (failure) exit(failure.exit, '', failure.message);
  const state = readCurrent();
  if (opts['--json']) {
    try {
      exit(0, JSON.stringify(JSON.parse(state), null, 2), '');
    } catch {
      exit(1, '', 'nmstatectl stand-in: `show --json` needs the state to have been applied as JSON (the stand-in has no YAML parser)');
    }
  }
  exit(0, state, '');
}

function main() {
  const verb = argv.find((a) => !a.startsWith('-'));
  if (argv.includes('--version') || argv.includes('-V') || verb === 'version') exit(0, 'nmstatectl 2.2.0 (testbed stand-in)', '');
  if (!verb) exit(2, '', 'Usage: nmstatectl <apply|commit|rollback|show|version> [OPTIONS]\nerror: a subcommand is required');
  const rest = argv.slice(argv.indexOf(verb) + 1);
  expireCheckpoint();
  switch (verb) {
    case 'apply':
    case 'set':
    case 'a':
      return apply(rest);
    case 'commit':
      return commitOrRollback('commit', rest);
    case 'rollback':
      return commitOrRollback('rollback', rest);
    case 'show':
    case 's':
      return show(rest);
    default:
      return exit(2, '', `error: the stand-in nmstatectl does not implement '${verb}' (apply, commit, rollback, show, version)`);
  }
}

main();
