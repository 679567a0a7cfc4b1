// src/host/chrony.ts against the real chronyd and chronyc (Debian's chrony 4.3; RHCOS has 4.x with the same
// command protocol): the chrony.conf the agent writes is accepted by chronyd's own parser, `tracking` reads a
// daemon without sources and one synchronised to a local NTP server, and sources added at run time are used.
// Both daemons run with -x (never touch this machine's clock) and their own command sockets; the server
// answers on 127.0.0.1:123, where `chronyc add server` sends a node's requests.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { addSources, chronyConf, makeStep, tracking, type Tracking } from '../../../src/host/chrony';
import { ensureDebianPackages } from '../../support/apt';

const dir = mkdtempSync(path.join(tmpdir(), 'sno-chrony-'));
const daemon = (name: string, conf: string[]) => {
  const d = path.join(dir, name);
  mkdirSync(d, { mode: 0o700 });
  writeFileSync(path.join(d, 'chrony.conf'), [...conf, `bindcmdaddress ${d}/cmd.sock`, 'cmdport 0', `pidfile ${d}/chronyd.pid`, ''].join('\n'));
  execFileSync('chronyd', ['-u', 'root', '-x', '-f', path.join(d, 'chrony.conf')], { stdio: 'pipe' });
  return d;
};
const stop = (d: string) => {
  try {
    process.kill(Number(readFileSync(path.join(d, 'chronyd.pid'), 'utf8')), 'SIGTERM');
  } catch {
    // not running
  }
};
let client = '';
let server = '';
let host: LocalHost;

before(() => {
  ensureDebianPackages(['chrony'], { startServices: false });
  server = daemon('server', ['port 123', 'bindaddress 127.0.0.1', 'local stratum 8', 'allow 127.0.0.1']);
  client = daemon('client', ['port 0', 'makestep 1.0 3']);
  // The node's chronyc talks to /run/chrony/chronyd.sock; here it is pointed at the client daemon's socket.
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(path.join(bin, 'chronyc'), `#!/bin/sh\nexec /usr/bin/chronyc -h ${client}/cmd.sock "$@"\n`);
  chmodSync(path.join(bin, 'chronyc'), 0o755);
  host = new LocalHost({ root: '/', env: { PATH: `${bin}:${process.env.PATH}` } });
});

after(() => {
  stop(client);
  stop(server);
  rmSync(dir, { recursive: true, force: true });
});

test("chronyd's own parser takes the chrony.conf the agent writes, every directive of it", () => {
  const conf = chronyConf({ servers: ['10.20.0.5', 'ntp1.store42.example.com'], pools: ['pool.store42.example.com'] });
  const file = path.join(dir, 'site-chrony.conf');
  writeFileSync(file, conf);
  const res = spawnSync('chronyd', ['-p', '-f', file], { encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
  assert.deepEqual(res.stdout.trim().split('\n'), conf.split('\n').filter((l) => l && !l.startsWith('#')));
});

test('tracking: not synchronised without sources; synchronised with the source added at run time; makestep refused under -x', async () => {
  const first = await tracking(host);
  assert.deepEqual(first, { synchronised: false, offsetSeconds: 0 });
  await addSources(host, { servers: ['127.0.0.1'], pools: [] });
  let t: Tracking | string = first;
  // A deadline sized for a loaded machine: it costs time only when chronyd never synchronises.
  const end = Date.now() + 5 * 60_000;
  while (Date.now() < end && (typeof t === 'string' || !t.synchronised)) {
    await new Promise((r) => setTimeout(r, 500));
    t = await tracking(host);
  }
  assert.ok(typeof t !== 'string' && t.synchronised, `synchronised within 5 minutes: ${JSON.stringify(t)}`);
  assert.equal(t.source, '127.0.0.1');
  assert.ok(typeof t.offsetSeconds === 'number' && Math.abs(t.offsetSeconds) < 0.1, `a small offset from a server on the same clock: ${t.offsetSeconds}`);
  // chronyd -x may not step the clock, so it refuses; on a node it steps (chronyc(1) makestep).
  assert.equal(await makeStep(host), false);
});

test('a daemon that is not running is named as such, with what chronyc said', async () => {
  const pid = Number(readFileSync(path.join(client, 'chronyd.pid'), 'utf8'));
  stop(client);
  // Gone once its process is (not after a fixed 300 ms: chronyd may take longer to exit on a loaded machine).
  const gone = Date.now() + 5 * 60_000;
  // A zombie (state Z) has exited: it only waits for its parent to reap it.
  const running = () => {
    try {
      return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  };
  while (running()) {
    if (Date.now() > gone) assert.fail(`chronyd (pid ${pid}) still running 5 minutes after SIGTERM`);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(await tracking(host), 'chronyd does not answer (Could not open connection to daemon)');
});
