// The shell scripts the MachineConfig installs, run for real: the NetworkManager dispatcher script against a
// real br-ex in a private network namespace with the real `ip` (the kernel here has no dummy links, so br-ex
// is a Linux bridge), and all scripts through shellcheck.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureDebianPackages } from '../../support/apt';
import { parseInternalAddresses, renderDispatcherScript } from '../../../src/render/internal-ip';
import { renderLocalDnsDispatcher } from '../../../src/render/local-dns';
import { renderPodmanLauncher } from '../../../src/render/podman';
import { buildMachineConfig } from '../../../src/render/machineconfig';
import { decodeFileContents } from '../../support/ignition';
import { MC_WRAPPER_PATH } from '../../../src/render/layout';

describe('node scripts', () => {
  let dir: string;
  before(() => {
    ensureDebianPackages(['iproute2', 'util-linux', 'shellcheck']);
    dir = mkdtempSync(path.join(os.tmpdir(), 'sno-scripts-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs `body` in a fresh network namespace with a bridge named br-ex and a veth named eth9, both up. */
  function inNetns(body: string): { code: number | null; out: string; err: string } {
    const script = ['set -eu', 'ip link add br-ex type bridge', 'ip link set br-ex up', 'ip link add eth9 type veth peer name eth9p', 'ip link set eth9 up', body].join('\n');
    const res = spawnSync('unshare', ['--net', 'bash', '-c', script], { encoding: 'utf8', timeout: 5 * 60_000 });
    return { code: res.status, out: res.stdout, err: res.stderr };
  }

  test('the dispatcher script puts the internal addresses on br-ex, once, for the right actions only', () => {
    const script = path.join(dir, '30-sno-reconfigure-internal-ip');
    writeFileSync(script, renderDispatcherScript(parseInternalAddresses(['192.168.127.10/24', 'fd00:127::10/64'])), { mode: 0o755 });
    const res = inNetns(`
${script} eth9 up
${script} br-ex down
echo "after-down: $(ip -o addr show dev br-ex scope global | grep -c 'inet' || true)"
${script} br-ex pre-up
${script} br-ex up
${script} br-ex pre-up
echo '--- br-ex'; ip -o addr show dev br-ex
echo '--- eth9'; ip -o addr show dev eth9
ip addr flush dev br-ex scope global
${script} br-ex dhcp4-change
echo '--- after flush'; ip -o addr show dev br-ex
`);
    assert.equal(res.code, 0, res.err);
    const section = (name: string): string => res.out.split(`--- ${name}\n`)[1]?.split(/^--- /m)[0] ?? '';
    assert.match(res.out, /after-down: 0/, 'nothing added on down');
    const brEx = section('br-ex');
    assert.equal((brEx.match(/inet 192\.168\.127\.10\/24 /g) ?? []).length, 1, brEx);
    assert.equal((brEx.match(/inet6 fd00:127::10\/64 /g) ?? []).length, 1, brEx);
    assert.doesNotMatch(brEx.split('\n').find((l) => l.includes('fd00:127::10')) ?? '', /tentative/, 'IPv6 address usable at once (nodad)');
    assert.doesNotMatch(section('eth9'), /192\.168\.127\.10|fd00:127::10/, 'other interfaces untouched');
    const afterFlush = section('after flush');
    assert.match(afterFlush, /inet 192\.168\.127\.10\/24 /, 're-added after NetworkManager re-synced the device');
    assert.match(afterFlush, /inet6 fd00:127::10\/64 /);
  });

  test('shellcheck finds nothing in the dispatcher scripts, the podman launcher and the wrapper', () => {
    const mc = buildMachineConfig({ role: 'master', runtime: 'host', bundle: Buffer.from('#!/usr/bin/env node\n'), internalAddresses: [], nodeIpPinning: 'hint', trustedKeys: [], allowUnsignedMedia: true, enable: false, version: '0.0.0' });
    const wrapper = mc.spec.config.storage?.files.find((f) => f.path === MC_WRAPPER_PATH);
    assert.ok(wrapper);
    const scripts: Record<string, string> = {
      'dispatcher.sh': renderDispatcherScript(parseInternalAddresses(['10.0.0.10/24', 'fd00::10/64'])),
      'launcher.sh': renderPodmanLauncher(),
      'wrapper.sh': decodeFileContents(wrapper).toString('utf8'),
      'local-dns-dispatcher.sh': renderLocalDnsDispatcher(),
    };
    for (const [name, text] of Object.entries(scripts)) {
      const file = path.join(dir, name);
      writeFileSync(file, text);
      const res = spawnSync('shellcheck', ['--severity=style', file], { encoding: 'utf8' });
      assert.equal(res.status, 0, `${name}:\n${res.stdout}${res.stderr}`);
    }
    // And it would catch a mistake.
    writeFileSync(path.join(dir, 'bad.sh'), '#!/bin/bash\nrm -rf $1/\n');
    assert.notEqual(spawnSync('shellcheck', [path.join(dir, 'bad.sh')]).status, 0);
  });
});
