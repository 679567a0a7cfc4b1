// Proves the systemd testbed itself (issue #7 groundwork): real systemd as PID 1 of a namespace, units
// installed the way Ignition/MCD would, sd_notify and the watchdog, journald priorities, self-disabling
// units, power cuts, site-config media, the host's node inside, and cleanup that leaves nothing behind.
// When the machine cannot host the namespace, every test FAILS with the reason (never skips).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, rmdirSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBundle, PROJECT_ROOT } from '../support/bundle';
import { Testbed, cgroupBase, ensureRootfsImage, isAlive, leftovers, sweepStaleNow, type IgnConfig, type IgnUnit, type RootfsImage } from './testbed/index';
import { pollUntil } from './testbed/proc';
import { TESTBED_NODE } from './testbed/node-runtime';

const HERE = path.dirname(fileURLToPath(import.meta.url));

let image: Promise<RootfsImage> | undefined;
/** Preflight + cached rootfs, once per file; a machine that cannot host the testbed fails here, loudly. */
const ready = (): Promise<RootfsImage> => (image ??= ensureRootfsImage());

/** A tiny Ignition config: files as data URLs (base64 and percent-encoded), units enabled or masked. */
function ignition(files: Record<string, { text: string; mode?: number }>, units: IgnUnit[]): IgnConfig {
  return {
    ignition: { version: '3.2.0' },
    storage: {
      files: Object.entries(files).map(([p, f], i) => ({
        path: p,
        mode: f.mode ?? 0o644,
        overwrite: true,
        // alternate the two data URL encodings the MCO emits
        contents: { source: i % 2 === 0 ? `data:text/plain;charset=utf-8;base64,${Buffer.from(f.text).toString('base64')}` : `data:,${encodeURIComponent(f.text)}` },
      })),
    },
    systemd: { units },
  };
}

const lines = (s: string): string[] => s.split('\n').filter((l) => l.trim() !== '');

// The cases of a describe run a few at a time, each on a machine of its own (one boots while another waits on
// its units); the cleanup cases stay one at a time, since they assert on everything this process holds.
describe('systemd testbed: boot and units', { concurrency: 3 }, () => {
  const bed = new Testbed();
  after(() => bed.cleanup());

  test('boots to running from the cached rootfs, with systemd as PID 1 of its own namespace', async (t) => {
    const img = await ready();
    t.diagnostic(`rootfs ${img.key}: ${img.built ? `built with debootstrap in ${img.ms} ms` : 'from cache'}`);
    const m = await bed.machine({ hostname: 'sno-boot-test' });
    await m.boot();
    t.diagnostic(`boot to running: ${m.lastBootMs} ms (${(await m.execOk(['systemd-analyze'])).split('\n')[0]})`);
    assert.equal(await m.systemState(), 'running');
    assert.equal((await m.execOk(['cat', '/proc/1/comm'])).trim(), 'systemd');
    assert.equal((await m.execOk(['hostname'])).trim(), 'sno-boot-test');
    assert.equal((await m.execOk(['systemd-detect-virt', '--container'])).trim(), 'container-other');
    assert.deepEqual(lines((await m.systemctl('--failed', '--no-legend', '--plain')).stdout), []);
    // the machine's PID 1 is not the host's: the host sees it as an ordinary process
    assert.notEqual(m.pid, 1);
    assert.match(readFileSync(`/proc/${m.pid}/cmdline`, 'utf8'), /systemd/);
  });

  test("the testbed's node runs inside the machine", async () => {
    await ready();
    const m = await bed.machine();
    await m.boot();
    const out = await m.execOk(['node', '-e', 'console.log(JSON.stringify({v: process.version, pid: process.pid > 1, cwd: process.cwd()}))']);
    // the testbed's Node (the podman runtime image's major: testbed/node-runtime.ts), bind-mounted read-only
    assert.deepEqual(JSON.parse(out), { v: `v${TESTBED_NODE.version}`, pid: true, cwd: '/' });
    assert.match(await m.execOk(['findmnt', '-n', '-o', 'OPTIONS', '/usr/bin/node']), /^ro,/);
  });

  test('wiring: a private network has only lo; host paths can be bound in read-only; both survive a reboot', async () => {
    await ready();
    const m = await bed.machine();
    await m.boot({ network: 'private', binds: [{ hostPath: HERE, nodePath: '/opt/project-tests', readOnly: true }] });
    const links = lines(await m.execOk(['ip', '-o', 'link', 'show'])).map((l) => l.split(':')[1]!.trim());
    assert.deepEqual(links, ['lo']);
    assert.match(await m.execOk(['ip', '-o', 'addr', 'show', 'lo']), /inet 127\.0\.0\.1\/8/);
    assert.equal(await m.execOk(['cat', '/opt/project-tests/testbed.test.ts']), readFileSync(path.join(HERE, 'testbed.test.ts'), 'utf8'));
    assert.notEqual((await m.exec(['touch', '/opt/project-tests/x'])).code, 0);
    await m.reboot();
    assert.deepEqual(lines(await m.execOk(['ip', '-o', 'link', 'show'])).length, 1);
    assert.equal((await m.exec(['test', '-f', '/opt/project-tests/testbed.test.ts'])).code, 0);
  });

  test('units installed via Ignition: enabled ones start at boot, masked ones cannot start', async () => {
    await ready();
    const m = await bed.machine();
    await bed.installIgnition(
      m,
      ignition({ '/usr/local/bin/hello.sh': { text: '#!/bin/sh\necho "hello from $(hostname)" > /var/lib/hello/out\n', mode: 0o755 } }, [
        { name: 'hello.service', enabled: true, contents: '[Service]\nType=oneshot\nStateDirectory=hello\nExecStart=/usr/local/bin/hello.sh\nRemainAfterExit=yes\n[Install]\nWantedBy=multi-user.target\n' },
        { name: 'kubelet.service', mask: true },
      ]),
    );
    await m.boot();
    assert.equal(m.readFile('/var/lib/hello/out'), 'hello from sno-node\n');
    assert.equal((await m.systemctl('is-enabled', 'hello.service')).stdout.trim(), 'enabled');
    assert.equal((await m.systemctl('is-enabled', 'kubelet.service')).stdout.trim(), 'masked');
    const start = await m.systemctl('start', 'kubelet.service');
    assert.notEqual(start.code, 0);
    assert.match(start.stderr, /masked/);
  });

  test('the rendered MachineConfig installs like Ignition would: its unit loads and verifies, the bundle runs on the node', async () => {
    await ready();
    const bundle = ensureBundle();
    const mc = execFileSync(process.execPath, [bundle, 'render', 'machineconfig', '--runtime', 'host', '--allow-unsigned-media'], { encoding: 'utf8' });
    const m = await bed.machine();
    const applied = await bed.installMachineConfig(m, mc);
    assert.ok(applied.units.includes('sno-reconfigure.service'), JSON.stringify(applied));
    // keep the agent itself from running here (agent scenarios are separate): its done marker stops the unit
    m.writeFile('/etc/sno-reconfigure/done', '');
    await m.boot();
    const unit = await m.unitProperties('sno-reconfigure.service', ['LoadState', 'ConditionResult', 'ActiveState']);
    assert.deepEqual(unit, { LoadState: 'loaded', ConditionResult: 'no', ActiveState: 'inactive' });
    const verify = await m.exec(['systemd-analyze', 'verify', 'sno-reconfigure.service']);
    assert.deepEqual([verify.code, verify.stderr], [0, '']);
    const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.equal((await m.execOk(['sno-reconfigure', '--version'])).trim(), pkg.version);
  });

  test('Type=notify with WatchdogSec: READY and STATUS sent with /usr/bin/systemd-notify reach systemd', async () => {
    await ready();
    const m = await bed.machine();
    await bed.installIgnition(
      m,
      ignition(
        {
          '/usr/local/bin/notifier.sh': {
            text: '#!/bin/sh\n/usr/bin/systemd-notify --ready --status="phase 3 of 9: waiting for the API"\nwhile true; do /usr/bin/systemd-notify WATCHDOG=1; sleep 1; done\n',
            mode: 0o755,
          },
        },
        [{ name: 'notifier.service', enabled: true, contents: '[Service]\nType=notify\nNotifyAccess=all\nWatchdogSec=10\nExecStart=/usr/local/bin/notifier.sh\n[Install]\nWantedBy=multi-user.target\n' }],
      ),
    );
    await m.boot();
    const p = await m.waitForUnit('notifier.service', ['ActiveState', 'SubState', 'StatusText', 'WatchdogUSec'], (u) => u.ActiveState === 'active');
    assert.deepEqual(p, { ActiveState: 'active', SubState: 'running', StatusText: 'phase 3 of 9: waiting for the API', WatchdogUSec: '10s' });
  });

  test('a frozen Type=notify service is killed by the watchdog and restarted (Restart=on-failure)', async () => {
    await ready();
    const m = await bed.machine();
    await bed.installIgnition(
      m,
      ignition({ '/usr/local/bin/pinger.sh': { text: '#!/bin/sh\n/usr/bin/systemd-notify --ready\nwhile true; do /usr/bin/systemd-notify WATCHDOG=1; sleep 0.5; done\n', mode: 0o755 } }, [
        {
          name: 'pinger.service',
          enabled: true,
          contents: '[Service]\nType=notify\nNotifyAccess=all\nWatchdogSec=2\nTimeoutAbortSec=5\nLimitCORE=0\nRestart=on-failure\nRestartSec=100ms\nExecStart=/usr/local/bin/pinger.sh\n[Install]\nWantedBy=multi-user.target\n',
        },
      ]),
    );
    await m.boot();
    const before = await m.waitForUnit('pinger.service', ['ActiveState', 'MainPID', 'NRestarts'], (u) => u.ActiveState === 'active');
    assert.equal(before.NRestarts, '0');
    await m.execOk(['kill', '-STOP', before.MainPID!]);
    const after = await m.waitForUnit('pinger.service', ['ActiveState', 'MainPID', 'NRestarts'], (u) => u.NRestarts === '1' && u.ActiveState === 'active', 30_000);
    assert.notEqual(after.MainPID, before.MainPID);
    const journal = (await m.journalctl('-u', 'pinger.service', '-o', 'cat')).stdout;
    assert.match(journal, /Watchdog timeout/);
  });

  test('journald priorities: `<3>` lines on stdout are errors (SyslogLevelPrefix), the rest are not', async () => {
    await ready();
    const m = await bed.machine();
    const script = '#!/bin/sh\necho "<6>starting up"\necho "<3>cannot reach the API: connection refused"\necho "plain line"\necho "<4>retrying"\necho "<3>giving up after 3 tries"\n';
    await bed.installIgnition(
      m,
      ignition({ '/usr/local/bin/talker.sh': { text: script, mode: 0o755 } }, [
        { name: 'talker.service', enabled: true, contents: '[Service]\nType=oneshot\nSyslogIdentifier=talker\nExecStart=/usr/local/bin/talker.sh\n[Install]\nWantedBy=multi-user.target\n' },
      ]),
    );
    await m.boot();
    await m.waitForUnit('talker.service', ['ActiveState', 'Result'], (u) => u.Result === 'success' && u.ActiveState === 'inactive');
    const errors = (await m.journalctl('-u', 'talker.service', '-p', 'err', '-o', 'cat', '--identifier=talker')).stdout;
    assert.deepEqual(lines(errors), ['cannot reach the API: connection refused', 'giving up after 3 tries']);
    const all = lines((await m.journalctl('-u', 'talker.service', '-o', 'json', '--identifier=talker')).stdout).map((l) => JSON.parse(l) as { MESSAGE: string; PRIORITY: string });
    assert.deepEqual(
      all.map((e) => [e.PRIORITY, e.MESSAGE]),
      [
        ['6', 'starting up'],
        ['3', 'cannot reach the API: connection refused'],
        ['6', 'plain line'],
        ['4', 'retrying'],
        ['3', 'giving up after 3 tries'],
      ],
    );
  });

  test('a unit that disables itself and leaves a marker does not start after a reboot', async () => {
    await ready();
    const m = await bed.machine();
    // the bootstrap-in-place post-reboot pattern: do the work, mark it done, disable yourself
    const script = '#!/bin/sh\nset -e\nmkdir -p /var/lib/once\necho run >> /var/lib/once/runs\ntouch /etc/once.done\nsystemctl disable once.service\n';
    await bed.installIgnition(
      m,
      ignition({ '/usr/local/bin/once.sh': { text: script, mode: 0o755 } }, [
        { name: 'once.service', enabled: true, contents: '[Unit]\nConditionPathExists=!/etc/once.done\n[Service]\nType=oneshot\nExecStart=/usr/local/bin/once.sh\n[Install]\nWantedBy=multi-user.target\n' },
      ]),
    );
    await m.boot();
    await m.waitForUnit('once.service', ['Result', 'ActiveState'], (u) => u.Result === 'success' && u.ActiveState === 'inactive');
    assert.equal(readFileSync(m.path('/var/lib/once/runs'), 'utf8'), 'run\n');
    assert.equal((await m.systemctl('is-enabled', 'once.service')).stdout.trim(), 'disabled');

    await m.reboot();
    assert.equal(m.bootCount, 2);
    const p = await m.unitProperties('once.service', ['ActiveState', 'ExecMainStartTimestampMonotonic']);
    assert.deepEqual(p, { ActiveState: 'inactive', ExecMainStartTimestampMonotonic: '0' });
    // even when something enables and starts it again, the marker keeps it from running
    await m.execOk(['systemctl', 'enable', '--now', 'once.service']);
    const again = await m.unitProperties('once.service', ['ConditionResult', 'ExecMainStartTimestampMonotonic']);
    assert.deepEqual(again, { ConditionResult: 'no', ExecMainStartTimestampMonotonic: '0' });
    assert.equal(readFileSync(m.path('/var/lib/once/runs'), 'utf8'), 'run\n');
    // the journal keeps both boots apart
    assert.equal(lines(await m.execOk(['journalctl', '--list-boots'])).length, 1 + 2);
  });

  test('a reboot the node asks for (systemctl reboot) boots it again on the same disk, as a server does; a poweroff stays off', async () => {
    await ready();
    const m = await bed.machine();
    await m.boot();
    m.writeFile('/var/lib/before-reboot', 'kept\n');
    await m.exec(['systemctl', 'reboot', '--no-block'], { timeoutMs: 10_000 });
    await pollUntil(() => (m.bootCount === 2 && m.running ? true : undefined), 60_000, () => new Error(`no second boot (boots ${m.bootCount}, error ${m.requestedRebootError?.message ?? 'none'})`), 50);
    await m.waitForSystemState(['running'], 60_000);
    assert.equal(m.requestedReboots, 1);
    assert.equal(m.readFile('/var/lib/before-reboot'), 'kept\n');
    assert.equal(lines(await m.execOk(['journalctl', '--list-boots'])).length, 1 + 2);
    await m.exec(['systemctl', 'poweroff', '--no-block'], { timeoutMs: 10_000 });
    await pollUntil(() => (m.running ? undefined : true), 60_000, () => new Error('poweroff did not stop the machine'), 50);
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(m.running, false, 'a poweroff is not a reboot');
    assert.equal(m.bootCount, 2);
  });

  test('a power cut mid-unit kills everything at once; the unit starts again on the next boot', async () => {
    await ready();
    const m = await bed.machine();
    const script = '#!/bin/sh\necho "start $(cat /proc/sys/kernel/random/boot_id)" >> /var/lib/worker/events\n/usr/bin/systemd-notify --ready\nexec sleep infinity\n';
    await bed.installIgnition(
      m,
      ignition({ '/usr/local/bin/worker.sh': { text: script, mode: 0o755 } }, [
        {
          name: 'worker.service',
          enabled: true,
          contents: '[Service]\nType=notify\nNotifyAccess=all\nStateDirectory=worker\nExecStart=/usr/local/bin/worker.sh\nExecStop=/bin/sh -c \'echo stop >> /var/lib/worker/events\'\n[Install]\nWantedBy=multi-user.target\n',
        },
      ]),
    );
    await m.boot();
    await m.waitForUnit('worker.service', ['ActiveState'], (u) => u.ActiveState === 'active');
    const pid1 = m.pid;
    const inside = (await m.execOk(['systemctl', 'show', '-p', 'MainPID', '--value', 'worker.service'])).trim();
    assert.notEqual(inside, '0');

    await m.powerCut();
    assert.equal(isAlive(pid1), false);
    assert.equal(m.running, false);
    // no ExecStop ran: a power cut gives the unit no chance to clean up
    assert.deepEqual(lines(readFileSync(m.path('/var/lib/worker/events'), 'utf8')).map((l) => l.split(' ')[0]), ['start']);

    await m.boot();
    await m.waitForUnit('worker.service', ['ActiveState'], (u) => u.ActiveState === 'active');
    // a graceful shutdown, in contrast, stops the unit in order
    assert.deepEqual(await m.shutdown(), { graceful: true });
    const events = lines(readFileSync(m.path('/var/lib/worker/events'), 'utf8'));
    assert.deepEqual(events.map((l) => l.split(' ')[0]), ['start', 'start', 'stop']);
    // each boot has its own boot ID
    assert.notEqual(events[0], events[1]);
  });
});

describe('systemd testbed: site-config media', { concurrency: 3 }, () => {
  const bed = new Testbed();
  after(() => bed.cleanup());

  test('a FAT stick is found by label with blkid inside and mounts read-only with nosuid,nodev,noexec', async () => {
    await ready();
    const m = await bed.machine();
    const siteConfig = 'apiVersion: sno-reconfigure.io/v1\nkind: SiteConfig\nmetadata:\n  name: store-0042\n';
    const loop = await bed.insertMedia(m, { 'site-config.yaml': siteConfig, 'site-configs/store-0043-long-name.yaml': 'x: 1\n' });
    await m.boot();
    assert.equal((await m.execOk(['blkid', '-L', 'SITE-CONFIG'])).trim(), loop.device);
    const probe = await m.execOk(['blkid', '-c', '/dev/null', '-o', 'export', loop.device]);
    assert.match(probe, /^TYPE=vfat$/m);
    assert.match(probe, /^LABEL=SITE-CONFIG$/m);
    await m.execOk(['mkdir', '-p', '/run/media-test']);
    await m.execOk(['mount', '-o', 'ro,nosuid,nodev,noexec', loop.device, '/run/media-test']);
    assert.equal(await m.execOk(['cat', '/run/media-test/site-config.yaml']), siteConfig);
    assert.equal(await m.execOk(['cat', '/run/media-test/site-configs/store-0043-long-name.yaml']), 'x: 1\n');
    const opts = (await m.execOk(['findmnt', '-n', '-o', 'SOURCE,OPTIONS', '/run/media-test'])).trim();
    assert.match(opts, new RegExp(`^${loop.device} ro,nosuid,nodev,noexec`));
    const write = await m.exec(['touch', '/run/media-test/new']);
    assert.match(write.stderr, /Read-only file system/);
    await m.execOk(['umount', '/run/media-test']);
    // this kernel has no VFAT driver: a read-write mount is refused by the testbed's helper, loudly
    const rw = await m.exec(['mount', loop.device, '/run/media-test']);
    assert.notEqual(rw.code, 0);
    assert.match(rw.stderr, /only read-only FAT mounts/);
  });

  test('media is hot-plugged into one machine only; replacing it swaps what blkid finds', async () => {
    await ready();
    const a = await bed.machine({ hostname: 'node-a' });
    const b = await bed.machine({ hostname: 'node-b' });
    await Promise.all([a.boot(), b.boot()]);
    assert.notEqual((await a.exec(['blkid', '-L', 'SITE-CONFIG'])).code, 0);
    const first = await bed.insertMedia(a, { 'site-config.yaml': 'metadata: {name: first}\n' });
    assert.equal((await a.execOk(['blkid', '-L', 'SITE-CONFIG'])).trim(), first.device);
    // the other machine, running at the same time, does not see a's stick
    const inB = await b.exec(['blkid', '-c', '/dev/null', '-L', 'SITE-CONFIG']);
    assert.notEqual(inB.code, 0);
    assert.equal(existsSync(b.livePath(`/dev/${path.basename(first.device)}`)), false);

    const second = await bed.replaceMedia(a, first, { 'site-config.yaml': 'metadata: {name: second}\n' });
    const dev = (await a.execOk(['blkid', '-c', '/dev/null', '-L', 'SITE-CONFIG'])).trim();
    assert.equal(dev, second.device);
    await a.execOk(['mkdir', '-p', '/run/m']);
    await a.execOk(['mount', '-o', 'ro', dev, '/run/m']);
    assert.equal(await a.execOk(['cat', '/run/m/site-config.yaml']), 'metadata: {name: second}\n');
    await a.execOk(['umount', '/run/m']);
  });

  test('an ext4 volume (labels up to 16 characters) mounts with the real kernel driver', async () => {
    await ready();
    const m = await bed.machine();
    const loop = await bed.insertMedia(m, { 'site-config.yaml': 'kind: SiteConfig\n' }, 'cluster-config', { fs: 'ext4' });
    await m.boot();
    assert.equal((await m.execOk(['blkid', '-L', 'cluster-config'])).trim(), loop.device);
    await m.execOk(['mkdir', '-p', '/run/c']);
    await m.execOk(['mount', '-o', 'ro,nosuid,nodev,noexec', loop.device, '/run/c']);
    assert.equal((await m.execOk(['findmnt', '-n', '-o', 'FSTYPE', '/run/c'])).trim(), 'ext4');
    assert.equal(await m.execOk(['cat', '/run/c/site-config.yaml']), 'kind: SiteConfig\n');
  });

  test('makeVolume rejects a label the filesystem cannot hold', async () => {
    await ready();
    await assert.rejects(bed.volume({ 'a.yaml': 'x' }, 'relocation-config'), /vfat label has 1 to 11 characters; "relocation-config" has 17/);
    await assert.rejects(bed.volume({ '../escape': 'x' }, 'SITE-CONFIG'), /must be relative and stay inside the volume/);
  });
});

describe('systemd testbed: stand-in nmstatectl inside a machine', () => {
  const bed = new Testbed();
  after(() => bed.cleanup());

  // The stand-in changes real interfaces (test/e2e/nmstatectl-standin.test.ts proves it on a node with its own
  // network): on a machine in the host's network namespace it must refuse, and change nothing.
  test("on the host's network namespace it refuses to change anything", async () => {
    await ready();
    const m = await bed.machine();
    await m.boot();
    const linksBefore = await m.execOk(['ip', '-o', 'link', 'show']);
    m.writeFile('/root/net.yaml', 'interfaces:\n- name: br-ex\n  type: ovs-bridge\n  state: up\n');
    const applied = await m.exec(['nmstatectl', 'apply', '--no-commit', '--timeout', '600', '/root/net.yaml']);
    assert.equal(applied.code, 1);
    assert.match(applied.stderr, /^NmstateError: Bug: the testbed network is not set up in this namespace \(testbed-lan\.service has not run\): refusing to touch any interface$/m);
    assert.equal(await m.execOk(['ip', '-o', 'link', 'show']), linksBefore);
    assert.equal((await m.exec(['nmstatectl', 'rollback'])).code, 1, 'no checkpoint was taken');
  });
});

describe('systemd testbed: cleanup', () => {
  after(() => {
    // the crash children's cgroup base (empty once swept)
    if (existsSync(cgroupBase(CRASH_PREFIX))) rmdirSync(cgroupBase(CRASH_PREFIX));
  });

  test('cleanup() leaves no process, loop device, mount, cgroup or temp dir behind', async () => {
    await ready();
    const bed = new Testbed();
    try {
      const m = await bed.machine();
      const loop = await bed.insertMedia(m, { 'site-config.yaml': 'kind: SiteConfig\n' });
      await m.boot();
      // leave the stick mounted and a stray background process behind, as a crashing test would
      await m.execOk(['mkdir', '-p', '/run/x']);
      await m.execOk(['mount', '-o', 'ro', loop.device, '/run/x']);
      await m.execOk(['sh', '-c', 'setsid sleep 600 >/dev/null 2>&1 < /dev/null &']);
      const during = leftovers();
      assert.ok(during.processes.length > 3, `processes while running: ${during.processes.length}`);
      assert.equal(during.loopDevices.length, 1);
      assert.equal(during.cgroups.length, 1);
    } finally {
      await bed.cleanup();
    }
    assert.deepEqual(leftovers(), { processes: [], loopDevices: [], mounts: [], cgroups: [], tempDirs: [] });
  });

  test('a node that cannot boot fails with the reason, and its cleanup still leaves nothing', async () => {
    await ready();
    const bed = new Testbed();
    try {
      const m = await bed.machine();
      rmSync(m.path('/lib/systemd/systemd'));
      await assert.rejects(m.boot({ timeoutMs: 20_000 }), /PID 1 died while waiting for running:[\s\S]*\/lib\/systemd\/systemd/);
      assert.equal(m.running, false);
    } finally {
      await bed.cleanup();
    }
    assert.deepEqual(leftovers(), { processes: [], loopDevices: [], mounts: [], cgroups: [], tempDirs: [] });
  });

  for (const mode of ['exit', 'throw'] as const) {
    test(`a test process that dies by ${mode === 'exit' ? 'process.exit()' : 'an uncaught exception'} still cleans up (exit safety net)`, async () => {
      await ready();
      const { created, code } = await runCrashChild(mode);
      assert.equal(code, mode === 'exit' ? 3 : 1);
      assertGone(created);
    });
  }

  test('what a SIGKILLed test process left is swept by the next one', async () => {
    await ready();
    const { created, child } = await startCrashChild('hang');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    // nothing ran in the dead process: its machine is still up
    assert.equal(isAlive(created.pid1), true);
    const removed = sweepStaleNow(CRASH_PREFIX);
    assert.ok(removed.some((r) => r === created.cgroup), `swept: ${removed.join(', ')}`);
    assertGone(created);
  });
});

const CRASH_PREFIX = `sno-tbcrash${process.pid}-`;

interface Created {
  pid1: number;
  cgroup: string;
  loop: string;
  image: string;
  diskDir: string;
}

async function startCrashChild(mode: string): Promise<{ created: Created; child: ReturnType<typeof spawn> }> {
  // Its own prefix: a test process started meanwhile must not sweep this child's leftovers before we look.
  const env = { ...process.env, SNO_TESTBED_PREFIX: CRASH_PREFIX };
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, 'helpers', 'crash-child.ts'), mode], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const created = await new Promise<Created>((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!) as Created);
    });
    // 'close', not 'exit': the child prints and exits at once, and its exit can be heard before its line is read.
    child.once('close', (code) => reject(new Error(`crash-child exited (${code}) before reporting: ${err}`)));
  });
  return { created, child };
}

async function runCrashChild(mode: string): Promise<{ created: Created; code: number | null }> {
  const { created, child } = await startCrashChild(mode);
  const code = await new Promise<number | null>((r) => (child.exitCode !== null ? r(child.exitCode) : child.once('exit', (c) => r(c))));
  return { created, code };
}

function assertGone(c: Created): void {
  assert.equal(isAlive(c.pid1), false, 'PID 1 of the machine still runs');
  assert.equal(existsSync(c.cgroup), false, `cgroup ${c.cgroup} remains`);
  assert.equal(existsSync(c.diskDir), false, `disk ${c.diskDir} remains`);
  assert.equal(existsSync(c.image), false, `image ${c.image} remains`);
  const backing = existsSync(`/sys/block/${path.basename(c.loop)}/loop/backing_file`) ? readFileSync(`/sys/block/${path.basename(c.loop)}/loop/backing_file`, 'utf8').trim() : '';
  assert.ok(!backing.startsWith(c.image), `${c.loop} is still attached to ${backing}`);
}
