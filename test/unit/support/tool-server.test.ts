// The stand-in tools' server (test/support/stand-ins/tool-server.cjs, tool-client.sh): a call handed to the test
// process's server answers as the same call in a Node process of its own — exit status, stdout, stderr and what it
// leaves in the stand-in node's state — whatever its arguments hold, files named from the caller's folder; a held call whose caller was killed
// leaves nothing behind, as the killed process would; the server ends with the process that started it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createStandInNode, type StandInNode } from '../../support/standin-host';

const REPO = path.resolve(import.meta.dirname, '../../..');

async function eventually(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await sleep(20);
  assert.ok(ok(), what);
}

/** A PATH holding what tool-client.sh needs but no `node`: a call answered there was answered by the server. */
function pathWithoutNode(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sno-no-node-'));
  for (const t of ['bash', 'cat', 'head', 'readlink', 'dirname']) {
    const found = spawnSync('bash', ['-c', `command -v ${t}`], { encoding: 'utf8' }).stdout.trim();
    symlinkSync(found, path.join(dir, t));
  }
  return dir;
}

function call(node: StandInNode, env: NodeJS.ProcessEnv, tool: string, args: string[], cwd = node.dir) {
  const res = spawnSync(path.join(node.bin, tool), args, { env, cwd, encoding: 'utf8' });
  return { code: res.status, out: res.stdout, err: res.stderr };
}

const NETWORK = `# Sëcond flöor — rack "B" \\ the store's uplink
interfaces:
- name: eno2
  type: ethernet
  state: up
  ipv4:
    enabled: true
    dhcp: false
    address:
    - ip: 10.9.9.9
      prefix-length: 24
`;

/** The same calls on a node: what each answered, and the state they left. */
function session(node: StandInNode, env: NodeJS.ProcessEnv) {
  writeFileSync(path.join(node.dir, 'network.yaml'), NETWORK);
  const answers = [
    call(node, env, 'systemctl', ['is-active', 'kubelet.service']),
    call(node, env, 'systemctl', ['mask', 'crio.service']),
    call(node, env, 'systemctl', ['start', 'crio.service']),
    call(node, env, 'systemctl', ['enable', 'chronyd.service', 'a "quoted" \\ unit\nwith\tcontrol\x01']),
    call(node, env, 'nmstatectl', ['apply', '--no-commit', '--timeout', '60', 'network.yaml']),
    call(node, env, 'ping', ['-c', '1', '-W', '1', '192.168.42.1']),
    call(node, env, 'nmstatectl', ['commit']),
    call(node, env, 'nmstatectl', ['rollback']),
    call(node, env, 'nmstatectl', ['show', '--json']),
    call(node, env, 'ip', ['-j', 'addr']),
    call(node, env, 'chronyc', ['-n', 'tracking']),
    call(node, env, 'mount', ['-o', 'ro', '/dev/sdz1', path.join(node.root, 'mnt')]),
    call(node, env, 'umount', [path.join(node.root, 'mnt')]),
  ];
  const state = { units: node.units(), history: node.nmstateHistory(), calls: node.calls().map((c) => [c.tool, c.args]) };
  // Each node has a folder of its own: named alike, the two sessions compare as equals.
  return JSON.parse(JSON.stringify({ answers, state }).replaceAll(node.dir, '<node>')) as { answers: typeof answers; state: typeof state };
}

test('a call through the tool server answers and changes the node exactly as the same call in a Node process of its own', async () => {
  const served = createStandInNode();
  const alone = createStandInNode();
  const noNode = pathWithoutNode();
  try {
    await eventually(() => existsSync(served.env.STANDIN_TOOL_SERVER!), 'the tool server listens');
    const viaServer = session(served, { ...served.env, PATH: noNode });
    const { STANDIN_TOOL_SERVER: _none, ...aloneEnv } = alone.env;
    const inProcess = session(alone, aloneEnv);
    for (const a of viaServer.answers) assert.notEqual(a.code, 127, `answered by the server, not a Node process (no node on PATH): ${a.err}`);
    assert.deepEqual(viaServer.answers, inProcess.answers);
    assert.deepEqual(viaServer.state, inProcess.state);
    assert.equal(viaServer.answers[0]!.out, 'inactive\n', "a prepared node's kubelet is held down");
    assert.match(viaServer.answers[2]!.err, /crio\.service is masked/);
    assert.equal(viaServer.answers[4]!.code, 0, `the state in the file named relative to the caller's folder applied: ${viaServer.answers[4]!.err}`);
    assert.match(viaServer.answers[8]!.out, /"ip": "10\.9\.9\.9"/, 'the committed state is the file\'s');
    assert.deepEqual(viaServer.state.calls[3], ['systemctl', ['enable', 'chronyd.service', 'a "quoted" \\ unit\nwith\tcontrol\x01']]);
  } finally {
    served.cleanup();
    alone.cleanup();
    rmSync(noNode, { recursive: true, force: true });
  }
});

test('a held call ends with its caller: killed, it leaves nothing; alive, it finishes once the hold is released', async () => {
  const node = createStandInNode({ kubelet: 'running' });
  try {
    await eventually(() => existsSync(node.env.STANDIN_TOOL_SERVER!), 'the tool server listens');
    const release = node.hold('systemctl-stop');
    const killed = spawn(path.join(node.bin, 'systemctl'), ['stop', 'kubelet.service'], { env: node.env, stdio: 'ignore' });
    await eventually(() => node.calls('systemctl').length === 1, 'the stop was called');
    killed.kill('SIGKILL');
    await new Promise((r) => killed.once('exit', r));
    await sleep(200);
    release();
    await sleep(200);
    assert.equal(node.units()['kubelet.service']!.active, 'active', "a killed caller's held stop never ran");

    const releaseAgain = node.hold('systemctl-stop');
    const waiting = spawn(path.join(node.bin, 'systemctl'), ['stop', 'kubelet.service'], { env: node.env, stdio: 'ignore' });
    const exited = new Promise<number | null>((r) => waiting.once('exit', r));
    await eventually(() => node.calls('systemctl').length === 2, 'the second stop was called');
    assert.equal(node.units()['kubelet.service']!.active, 'active', 'held');
    releaseAgain();
    assert.equal(await exited, 0);
    assert.equal(node.units()['kubelet.service']!.active, 'inactive');
  } finally {
    node.cleanup();
  }
});

test('the tool server ends with the process that started it; calls then run in a Node process of their own', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sno-tool-server-owner-'));
  try {
    const script = path.join(dir, 'owner.ts');
    writeFileSync(script, `import { existsSync } from 'node:fs';
import { createStandInNode } from ${JSON.stringify(path.join(REPO, 'test/support/standin-host.ts'))};
const node = createStandInNode();
const wait = () => (existsSync(node.env.STANDIN_TOOL_SERVER!) ? console.log(JSON.stringify({ env: node.env, bin: node.bin, dir: node.dir })) : setTimeout(wait, 20));
wait();
`);
    const owner = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: REPO, encoding: 'utf8' });
    assert.equal(owner.status, 0, owner.stderr);
    const { env, bin, dir: nodeDir } = JSON.parse(owner.stdout) as { env: NodeJS.ProcessEnv; bin: string; dir: string };
    try {
      const port = Number(readFileSync(env.STANDIN_TOOL_SERVER!, 'utf8'));
      assert.ok(port > 0);
    } catch (e) {
      // The port file goes with its owner's temp folder: already gone is the outcome this test wants.
      assert.equal((e as NodeJS.ErrnoException).code, 'ENOENT');
    }
    await eventually(() => !existsSync(env.STANDIN_TOOL_SERVER!), "the server's port file is gone with its owner");
    mkdirSync(path.join(env.STANDIN_DIR!, 'fail'), { recursive: true });
    const after = spawnSync(path.join(bin, 'systemctl'), ['is-enabled', 'sno-reconfigure.service'], { env, encoding: 'utf8' });
    assert.deepEqual([after.status, after.stdout], [0, 'enabled\n'], 'answered in a Node process of its own');
    rmSync(nodeDir, { recursive: true, force: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a connection that is not a tool call is closed without an answer, and the server goes on serving', async () => {
  const node = createStandInNode();
  try {
    await eventually(() => existsSync(node.env.STANDIN_TOOL_SERVER!), 'the tool server listens');
    const port = Number(readFileSync(node.env.STANDIN_TOOL_SERVER!, 'utf8'));
    const answer = await new Promise<string>((resolve) => {
      const s = connect(port, '127.0.0.1', () => s.write('GET / HTTP/1.1\0\r\n\r\n'));
      let got = '';
      s.on('data', (d) => (got += d.toString()));
      s.on('close', () => resolve(got));
      s.on('error', () => undefined);
    });
    assert.equal(answer, '');
    assert.deepEqual(call(node, node.env, 'systemctl', ['is-enabled', 'sno-reconfigure.service']), { code: 0, out: 'enabled\n', err: '' });
  } finally {
    node.cleanup();
  }
});

test("a caller's stdin left open and empty (execFile's pipe, as the agent calls its tools) does not hold the call", async () => {
  const node = createStandInNode();
  try {
    await eventually(() => existsSync(node.env.STANDIN_TOOL_SERVER!), 'the tool server listens');
    const child = spawn(path.join(node.bin, 'systemctl'), ['is-enabled', 'sno-reconfigure.service'], { env: node.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    // 'close', not 'exit': a process's output can still be in the pipe when its exit is heard (one CI run read none).
    const code = await new Promise<number | null>((r) => child.once('close', r));
    child.stdin.end();
    assert.deepEqual([code, out], [0, 'enabled\n']);
  } finally {
    node.cleanup();
  }
});
