// The shell stand-ins (test/support/stand-ins/shell-tools.sh) keep host-tool.cjs's contract: every call recorded as
// one JSON line whatever its arguments hold, injected failures, and the resolvers' answers (checked against the
// Node versions they replaced, case by case).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createStandInNode } from '../../support/standin-host';

function call(node: ReturnType<typeof createStandInNode>, tool: string, args: string[]) {
  const res = spawnSync(tool, args, { env: { ...node.env }, encoding: 'utf8' });
  return { code: res.status, out: res.stdout, err: res.stderr };
}

test('agetty and systemd-notify: each call one JSON line with its arguments as given; a fail file fails them with its text', () => {
  const node = createStandInNode();
  try {
    const hostile = ['STATUS=a "quoted" \\ path', 'two\nlines\tand\x01control', 'ünïcode ✓'];
    assert.equal(call(node, 'systemd-notify', hostile).code, 0);
    assert.equal(call(node, 'agetty', ['--reload']).code, 0);
    assert.deepEqual(node.calls('systemd-notify').map((c) => c.args), [hostile]);
    assert.deepEqual(node.calls('agetty').map((c) => c.args), [['--reload']]);
    const at = node.calls('agetty')[0]!.time;
    assert.ok(Math.abs(at - Date.now()) < 60_000, `the call's time is in ms (${at})`);
    mkdirSync(path.join(node.standinDir, 'fail'), { recursive: true });
    writeFileSync(path.join(node.standinDir, 'fail', 'agetty'), 'agetty: no gettys\n');
    assert.deepEqual(call(node, 'agetty', ['--reload']), { code: 1, out: '', err: 'agetty: no gettys\n' });
  } finally {
    node.cleanup();
  }
});

test("dig answers from the site's published names, A or AAAA; getent from the node-local dnsmasq's longest matching domain, else the site DNS", () => {
  const node = createStandInNode();
  try {
    writeFileSync(path.join(node.standinDir, 'site-dns'), 'api.store42.example.com 192.0.2.50\napi.store42.example.com fd00::50\n  registry.store42.example.com   192.0.2.60  \n');
    assert.equal(call(node, 'dig', ['+short', '@192.0.2.1', 'api.store42.example.com', 'A']).out, '192.0.2.50\n');
    assert.equal(call(node, 'dig', ['+short', '@192.0.2.1', 'api.store42.example.com', 'AAAA']).out, 'fd00::50\n');
    assert.equal(call(node, 'dig', ['+short', '@192.0.2.1', 'registry.store42.example.com', 'A']).out, '192.0.2.60\n');
    assert.deepEqual(call(node, 'dig', ['+short', '@192.0.2.1', 'nothing.example.com', 'A']), { code: 0, out: '', err: '' });
    const dnsmasq = path.join(node.root, 'etc/dnsmasq.d');
    mkdirSync(dnsmasq, { recursive: true });
    writeFileSync(path.join(dnsmasq, 'a.conf'), 'address=/apps.sno1.store42.example.com/10.0.0.5\n  address=/store42.example.com/10.0.0.6  \n# address=/x/1\n');
    writeFileSync(path.join(dnsmasq, 'b.conf'), 'address=/api.sno1.store42.example.com/10.0.0.8');
    const answer = (name: string) => call(node, 'getent', ['ahosts', name]).out.split(/\s+/)[0];
    assert.equal(answer('console.apps.sno1.store42.example.com'), '10.0.0.5');
    assert.equal(answer('api.sno1.store42.example.com'), '10.0.0.8');
    assert.equal(answer('store42.example.com'), '10.0.0.6');
    assert.equal(call(node, 'getent', ['ahosts', 'other.example.org']).out, '192.0.2.10      STREAM other.example.org\n192.0.2.10      DGRAM\n');
    mkdirSync(path.join(node.standinDir, 'fail'), { recursive: true });
    writeFileSync(path.join(node.standinDir, 'fail', 'getent-other.example.org'), '');
    assert.deepEqual(call(node, 'getent', ['ahosts', 'other.example.org']), { code: 2, out: '', err: '' });
    assert.equal(node.calls('getent').length, 5);
  } finally {
    node.cleanup();
  }
});

test('lsblk and blkid list the attached volumes as host-tool.cjs did: labels only with udev, a hostile label handed to it', () => {
  const node = createStandInNode();
  try {
    node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': 'x' });
    node.attachVolume('sr0', ' RELOCATION-CONFIG \n', { 'site-config.yaml': 'x' });
    writeFileSync(path.join(node.standinDir, 'devices', 'sr0.fstype'), 'iso9660\n');
    assert.deepEqual(JSON.parse(call(node, 'lsblk', ['--json']).out), {
      blockdevices: [
        { name: 'sdb1', label: null, fstype: null, path: '/dev/sdb1', uuid: null },
        { name: 'sr0', label: null, fstype: null, path: '/dev/sr0', uuid: null },
      ],
    });
    writeFileSync(path.join(node.standinDir, 'udev'), '');
    assert.deepEqual(JSON.parse(call(node, 'lsblk', ['--json']).out).blockdevices.map((d: { label: string; fstype: string }) => [d.label, d.fstype]), [['SITE-CONFIG', 'vfat'], ['RELOCATION-CONFIG', 'iso9660']]);
    assert.equal(call(node, 'blkid', ['-o', 'export']).out, 'DEVNAME=/dev/sdb1\nLABEL=SITE-CONFIG\nUUID=UUID-sdb1\nTYPE=vfat\n\nDEVNAME=/dev/sr0\nLABEL=RELOCATION-CONFIG\nUUID=UUID-sr0\nTYPE=iso9660\n');
    // A label with a quote and a backslash stays one JSON string; one beyond ASCII (a right-to-left override, U+2028)
    // is answered by host-tool.cjs, trimmed and escaped by JavaScript, and still recorded once.
    node.attachVolume('loop0', 'a"b\\c', { 'site-config.yaml': 'x' });
    assert.equal(JSON.parse(call(node, 'lsblk', ['--json']).out).blockdevices[0].label, 'a"b\\c');
    node.attachVolume('loop0', 'c\u202etxt\u2028 ', { 'site-config.yaml': 'x' });
    assert.equal(JSON.parse(call(node, 'lsblk', ['--json']).out).blockdevices[0].label, 'c\u202etxt');
    assert.equal(node.calls('lsblk').length, 4);
    for (const name of ['loop0', 'sdb1', 'sr0']) node.detachVolume(name);
    assert.deepEqual(call(node, 'blkid', ['-o', 'export']), { code: 2, out: '', err: '' });
  } finally {
    node.cleanup();
  }
});
