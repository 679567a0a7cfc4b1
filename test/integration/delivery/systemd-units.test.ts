// Every unit file the delivery ships passes the real `systemd-analyze verify`, without a single warning, in a
// temp root that holds systemd's own units and stand-ins for the programs the units start.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureDebianPackages } from '../../support/apt';
import { PROJECT_ROOT } from '../../support/bundle';
import { RENEW_SERVICE, RENEW_TIMER, renderAgentUnit, renderKubeletHoldDropin, renderRenewService, renderRenewTimer, unitExecutables, UNIT_VARIANTS, type UnitVariant } from '../../../src/render/unit';
import { renderedSystemdFiles } from '../../../machineconfigs/render-examples';
import { KUBELET_HOLD_DROPIN, RUNTIME_ENV_PATH } from '../../../src/render/layout';
import { KUBELET_HOLD_FILE } from '../../../src/paths';
import { LOCAL_DNS_UNIT, renderLocalDnsUnit } from '../../../src/render/local-dns';
import { DONE_MARKER } from '../../../src/paths';

const SYSTEM_UNITS = '/usr/lib/systemd/system';

function makeRoot(): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'sno-units-'));
  // systemd's own units (targets, sysinit) so that dependencies resolve as on a real system.
  cpSync(SYSTEM_UNITS, path.join(root, SYSTEM_UNITS), { recursive: true, verbatimSymlinks: true });
  mkdirSync(path.join(root, 'etc/systemd/system'), { recursive: true });
  return root;
}

function standIn(root: string, nodePath: string): void {
  const p = path.join(root, nodePath);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
}

function verify(root: string, unit: string): { code: number | null; output: string } {
  const res = spawnSync('systemd-analyze', ['verify', `--root=${root}`, unit], { encoding: 'utf8' });
  return { code: res.status, output: `${res.stdout}${res.stderr}`.trim() };
}

function installAgentUnit(root: string, variant: UnitVariant): void {
  const dir = variant === 'rpm' ? SYSTEM_UNITS : '/etc/systemd/system';
  writeFileSync(path.join(root, dir, 'sno-reconfigure.service'), renderAgentUnit(variant));
  for (const executable of unitExecutables(variant)) standIn(root, executable);
  if (variant === 'podman') {
    mkdirSync(path.join(root, path.dirname(RUNTIME_ENV_PATH)), { recursive: true });
    writeFileSync(path.join(root, RUNTIME_ENV_PATH), 'SNO_RECONFIGURE_RUNTIME=podman\n');
  }
}

describe('systemd units', () => {
  const roots: string[] = [];
  before(() => ensureDebianPackages(['systemd']));
  after(() => {
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  });

  for (const variant of UNIT_VARIANTS) {
    test(`sno-reconfigure.service (${variant}) passes systemd-analyze verify with no warnings`, () => {
      const root = makeRoot();
      roots.push(root);
      installAgentUnit(root, variant);
      const res = verify(root, 'sno-reconfigure.service');
      assert.equal(res.output, '', `systemd-analyze verify printed:\n${res.output}`);
      assert.equal(res.code, 0);
    });
  }

  test('the kubelet hold drop-in passes systemd-analyze verify on top of a kubelet unit', () => {
    const root = makeRoot();
    roots.push(root);
    standIn(root, '/usr/bin/hyperkube');
    writeFileSync(path.join(root, 'etc/systemd/system/kubelet.service'), '[Unit]\nDescription=Kubernetes Kubelet\n[Service]\nType=notify\nExecStart=/usr/bin/hyperkube kubelet\nRestart=always\n[Install]\nWantedBy=multi-user.target\n');
    mkdirSync(path.join(root, 'etc/systemd/system/kubelet.service.d'));
    writeFileSync(path.join(root, 'etc/systemd/system/kubelet.service.d', KUBELET_HOLD_DROPIN), renderKubeletHoldDropin());
    const res = verify(root, 'kubelet.service');
    assert.equal(res.output, '', `systemd-analyze verify printed:\n${res.output}`);
    assert.equal(res.code, 0);
  });

  test('the node-local DNS unit passes systemd-analyze verify with no warnings', () => {
    const root = makeRoot();
    roots.push(root);
    standIn(root, '/usr/sbin/dnsmasq');
    writeFileSync(path.join(root, 'etc/systemd/system', LOCAL_DNS_UNIT), renderLocalDnsUnit());
    // It makes /etc/dnsmasq.d itself (the dnsmasq package's directory, which dnsmasq's --conf-dir needs) with mkdir.
    assert.match(verify(root, LOCAL_DNS_UNIT).output, /\/usr\/bin\/mkdir/);
    standIn(root, '/usr/bin/mkdir');
    const res = verify(root, LOCAL_DNS_UNIT);
    assert.equal(res.output, '', `systemd-analyze verify printed:\n${res.output}`);
    assert.equal(res.code, 0);
  });

  test('the check catches what it is for: unknown keys, missing programs', () => {
    const root = makeRoot();
    roots.push(root);
    installAgentUnit(root, 'machineconfig');
    const unit = path.join(root, 'etc/systemd/system/sno-reconfigure.service');
    writeFileSync(unit, renderAgentUnit('machineconfig').replace('[Service]\n', '[Service]\nWatchdogSeconds=60\n'));
    assert.match(verify(root, 'sno-reconfigure.service').output, /Unknown key 'WatchdogSeconds'/);
    writeFileSync(unit, renderAgentUnit('machineconfig'));
    rmSync(path.join(root, 'usr/bin/node'));
    const missing = verify(root, 'sno-reconfigure.service');
    assert.match(missing.output, /usr\/bin\/node/);
    assert.notEqual(missing.code, 0);
  });

  for (const variant of UNIT_VARIANTS.filter((v) => v !== 'rpm')) {
    test(`the certificate renewal service and timer (${variant}) pass systemd-analyze verify with no warnings`, () => {
      const root = makeRoot();
      roots.push(root);
      installAgentUnit(root, variant);
      writeFileSync(path.join(root, '/etc/systemd/system', RENEW_SERVICE), renderRenewService(variant));
      writeFileSync(path.join(root, '/etc/systemd/system', RENEW_TIMER), renderRenewTimer());
      const res = verify(root, RENEW_TIMER);
      assert.equal(res.output, '', res.output);
      assert.equal(res.code, 0);
      assert.match(renderRenewService(variant), /^ExecStart=.* renew-certificates$/m);
      assert.match(renderRenewService(variant), new RegExp(`^ConditionPathExists=${DONE_MARKER}$`, 'm'));
    });
  }

  test('the unit runs once, notifies, is watched and retries without a tight loop', () => {
    for (const variant of UNIT_VARIANTS) {
      const unit = renderAgentUnit(variant);
      const keys = new Map<string, string[]>();
      for (const line of unit.split('\n')) {
        const m = /^([A-Za-z]+)=(.*)$/.exec(line);
        if (m?.[1] && m[2] !== undefined) keys.set(m[1], [...(keys.get(m[1]) ?? []), m[2]]);
      }
      const one = (k: string): string | undefined => keys.get(k)?.at(-1);
      assert.equal(one('ConditionPathExists'), `!${DONE_MARKER}`);
      assert.equal(one('Type'), 'notify');
      assert.equal(one('NotifyAccess'), 'all');
      assert.equal(one('WatchdogSec'), '60s');
      assert.equal(one('Restart'), 'on-failure');
      assert.equal(one('SyslogIdentifier'), 'sno-reconfigure');
      assert.deepEqual(keys.get('WantedBy'), ['multi-user.target']);
      assert.ok(keys.get('After')?.includes('ovs-configuration.service'), 'ordered after ovs-configuration');
      assert.ok(keys.get('Wants')?.includes('ovs-configuration.service'), 'pulls in ovs-configuration');
      assert.ok(!keys.get('Before')?.some((v) => v.includes('kubelet')), 'never ordered before kubelet');
      // Automatic restarts alone can never exhaust the start limit: interval / RestartSec < burst.
      const seconds = (v: string | undefined): number => {
        const m = /^(\d+)(s|min|h)?$/.exec(v ?? '');
        assert.ok(m, `duration ${v}`);
        return Number(m[1]) * ({ s: 1, min: 60, h: 3600 }[(m[2] ?? 's') as 's' | 'min' | 'h']);
      };
      assert.ok(seconds(one('RestartSec')) >= 10, 'RestartSec paces retries');
      assert.ok(seconds(one('StartLimitIntervalSec')) / seconds(one('RestartSec')) < Number(one('StartLimitBurst')));
      assert.equal(keys.has('Delegate'), variant === 'podman');
    }
  });

  test('the hold drop-in keys kubelet on the hold file', () => {
    assert.match(renderKubeletHoldDropin(), new RegExp(`^ConditionPathExists=!${KUBELET_HOLD_FILE}$`, 'm'));
  });

  test('systemd/ holds exactly what the template renders (regenerate: tsx machineconfigs/render-examples.ts)', () => {
    for (const [file, text] of renderedSystemdFiles()) {
      assert.equal(readFileSync(path.join(PROJECT_ROOT, file), 'utf8'), text, `${file} is stale`);
    }
  });
});
