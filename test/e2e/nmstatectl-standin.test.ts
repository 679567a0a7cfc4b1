// The stand-in nmstatectl (test/e2e/testbed/stand-ins/nmstatectl.cjs) run on the host with its state moved
// into a temp dir: the checkpoint protocol the agent relies on (apply --no-commit --timeout, commit,
// rollback, NetworkManager's automatic rollback), failure injection, and the call log the e2e tests read.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const STAND_IN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'testbed', 'stand-ins', 'nmstatectl.cjs');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nmstatectl-standin-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function nmstatectl(args: string[], input?: string): { code: number; stdout: string; stderr: string } {
  const res = spawnSync(process.execPath, [STAND_IN, ...args], {
    input: input ?? '',
    encoding: 'utf8',
    env: { PATH: process.env.PATH, NMSTATE_STANDIN_STATE: path.join(dir, 'etc'), NMSTATE_STANDIN_RUN: path.join(dir, 'run'), NMSTATE_STANDIN_LOG: path.join(dir, 'log', 'calls.jsonl') },
  });
  return { code: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

function calls(): { argv: string[]; exit?: number; input?: string; checkpoint?: string; event?: string }[] {
  return readFileSync(path.join(dir, 'log', 'calls.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

const NEW_STATE = 'interfaces:\n- name: eth0\n  type: ethernet\n  state: up\n  ipv4:\n    enabled: true\n    address:\n    - ip: 192.168.42.10\n      prefix-length: 24\n';

describe('stand-in nmstatectl', () => {
  test('apply --no-commit keeps a checkpoint; commit makes the state stick', () => {
    const initial = nmstatectl(['show']).stdout;
    const file = path.join(dir, 'net.yaml');
    writeFileSync(file, NEW_STATE);
    const applied = nmstatectl(['apply', '--no-commit', '--timeout', '120', file]);
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(applied.stdout, NEW_STATE);
    assert.match(applied.stderr, /Created checkpoint \/org\/freedesktop\/NetworkManager\/Checkpoint\/1\n/);
    assert.equal(nmstatectl(['show']).stdout, NEW_STATE);
    const commit = nmstatectl(['commit']);
    assert.deepEqual(commit, { code: 0, stdout: '/org/freedesktop/NetworkManager/Checkpoint/1\n', stderr: '' });
    assert.equal(nmstatectl(['show']).stdout, NEW_STATE);
    // nothing left to roll back to
    const rb = nmstatectl(['rollback']);
    assert.equal(rb.code, 1);
    assert.match(rb.stderr, /No checkpoint found to rollback/);
    assert.notEqual(initial, NEW_STATE);
    assert.deepEqual(
      calls().map((c) => [c.argv[0], c.exit]),
      [
        ['show', 0],
        ['apply', 0],
        ['show', 0],
        ['commit', 0],
        ['show', 0],
        ['rollback', 1],
      ],
    );
    assert.equal(calls()[1]!.input, NEW_STATE);
    assert.equal(calls()[1]!.checkpoint, '/org/freedesktop/NetworkManager/Checkpoint/1');
  });

  test('rollback restores the state before the apply (state from stdin)', () => {
    const before = nmstatectl(['show']).stdout;
    assert.equal(nmstatectl(['apply', '--no-commit'], NEW_STATE).code, 0);
    assert.equal(nmstatectl(['show']).stdout, NEW_STATE);
    const rb = nmstatectl(['rollback', '/org/freedesktop/NetworkManager/Checkpoint/1']);
    assert.equal(rb.code, 0, rb.stderr);
    assert.equal(nmstatectl(['show']).stdout, before);
  });

  test('an uncommitted checkpoint rolls itself back once its timeout has passed', () => {
    const before = nmstatectl(['show']).stdout;
    assert.equal(nmstatectl(['apply', '--no-commit', '--timeout', '0'], NEW_STATE).code, 0);
    // NetworkManager's timer fired: the next look finds the old state, and commit has nothing to commit
    assert.equal(nmstatectl(['show']).stdout, before);
    const commit = nmstatectl(['commit']);
    assert.equal(commit.code, 1);
    assert.ok(calls().some((c) => c.event === 'auto-rollback' && c.checkpoint === '/org/freedesktop/NetworkManager/Checkpoint/1'));
  });

  test('a second checkpoint is refused while one is pending; a plain apply commits at once', () => {
    assert.equal(nmstatectl(['apply', '--no-commit', '--timeout', '300'], NEW_STATE).code, 0);
    const second = nmstatectl(['apply', '--no-commit'], 'interfaces: []\n');
    assert.equal(second.code, 1);
    assert.match(second.stderr, /checkpoint already exists/);
    assert.equal(nmstatectl(['commit']).code, 0);
    assert.equal(nmstatectl(['apply'], 'interfaces: []\n').code, 0);
    assert.equal(existsSync(path.join(dir, 'run', 'checkpoint.json')), false);
    assert.equal(nmstatectl(['show']).stdout, 'interfaces: []\n');
  });

  test('failures are injected per verb, once or until removed, and leave the state unchanged', () => {
    const before = nmstatectl(['show']).stdout;
    mkdirSync(path.join(dir, 'etc'));
    writeFileSync(path.join(dir, 'etc', 'fail'), 'apply once 1 NmstateError: VerificationError: eth0 ipv4 address mismatch\ncommit 1 NmstateError: Bug: commit refused\n');
    const failed = nmstatectl(['apply', '--no-commit'], NEW_STATE);
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /VerificationError: eth0 ipv4 address mismatch/);
    assert.equal(nmstatectl(['show']).stdout, before);
    // `once`: the next apply succeeds; the commit failure stays
    assert.equal(nmstatectl(['apply', '--no-commit'], NEW_STATE).code, 0);
    const commit = nmstatectl(['commit']);
    assert.equal(commit.code, 1);
    assert.match(commit.stderr, /commit refused/);
    assert.equal(nmstatectl(['rollback']).code, 0);
    assert.equal(nmstatectl(['show']).stdout, before);
  });

  test('bad input and unknown commands fail like nmstatectl: 1 for errors, 65 for bad data, 2 for usage', () => {
    assert.equal(nmstatectl(['apply'], '').code, 1);
    assert.equal(nmstatectl(['apply', '--timeout', 'soon'], NEW_STATE).code, 65);
    assert.equal(nmstatectl(['apply', '--timeout'], NEW_STATE).code, 2);
    assert.equal(nmstatectl(['gc', 'x.yaml']).code, 2);
    assert.equal(nmstatectl([]).code, 2);
    assert.equal(nmstatectl(['apply', '/nonexistent.yaml']).code, 1);
    assert.match(nmstatectl(['version']).stdout, /^nmstatectl 2\.\d+\.\d+/);
    // JSON in, JSON out for show --json; YAML cannot be converted without a YAML parser: said so
    assert.equal(nmstatectl(['apply'], '{"interfaces":[]}').code, 0);
    assert.deepEqual(JSON.parse(nmstatectl(['show', '--json']).stdout), { interfaces: [] });
    assert.equal(nmstatectl(['apply'], NEW_STATE).code, 0);
    assert.match(nmstatectl(['show', '--json']).stderr, /needs the state to have been applied as JSON/);
  });
});
