// The RPM, built with the real rpmbuild and checked with the real rpmlint (0 errors), its payload and
// dependencies read back with rpm, and the nodejs epoch trap (reference/runtime-libs.md section 7) tried
// against a throwaway rpmdb holding a fake Epoch-1 nodejs 20, then 22.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureDebianPackages } from '../../support/apt';
import { ensureBundle, PROJECT_ROOT } from '../../support/bundle';
import { buildRpm, type BuiltRpm } from '../../../rpm/build-rpm';
import { renderAgentUnit, renderKubeletHoldDropin } from '../../../src/render/unit';

const rpmq = (...args: string[]): string => execFileSync('rpm', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

describe('RPM', () => {
  let dir: string;
  let built: BuiltRpm;
  let bundle: string;

  before(() => {
    ensureDebianPackages(['rpm', 'rpmlint', 'rpm2cpio', 'cpio']);
    bundle = ensureBundle();
    dir = mkdtempSync(path.join(os.tmpdir(), 'sno-rpm-'));
    built = buildRpm({ topdir: path.join(dir, 'top'), bundle });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('is a noarch package named after package.json\'s version', () => {
    assert.match(path.basename(built.rpm), new RegExp(`^sno-reconfigure-${built.version.replace(/\./g, '\\.')}-1\\.el9\\.noarch\\.rpm$`));
    assert.equal(rpmq('-qp', '--queryformat', '%{ARCH}', built.rpm), 'noarch');
  });

  test('rpmlint reports 0 errors for the package and the spec it was built from', () => {
    const res = spawnSync('rpmlint', ['-c', path.join(PROJECT_ROOT, 'rpm', 'rpmlint.toml'), built.spec, built.rpm], { encoding: 'utf8' });
    const summary = /(\d+) errors, (\d+) warnings/.exec(res.stdout);
    assert.ok(summary, res.stdout + res.stderr);
    assert.equal(summary[1], '0', res.stdout);
    assert.equal(res.status, 0, res.stdout);
  });

  test('payload: bundle in libexec, command in /usr/bin, unit, kubelet hold drop-in, preset', () => {
    const files = rpmq('-qlp', built.rpm).trim().split('\n');
    assert.deepEqual(files, [
      '/etc/sno-reconfigure',
      '/etc/sno-reconfigure/trusted-keys',
      '/usr/bin/sno-reconfigure',
      '/usr/lib/systemd/system-preset/50-sno-reconfigure.preset',
      '/usr/lib/systemd/system/kubelet.service.d',
      '/usr/lib/systemd/system/kubelet.service.d/10-sno-reconfigure-hold.conf',
      '/usr/lib/systemd/system/sno-reconfigure.service',
      '/usr/libexec/sno-reconfigure',
      '/usr/libexec/sno-reconfigure/sno-reconfigure.cjs',
    ]);
  });

  test('requires nodejs(engine) >= 22 (never an epoch-less nodejs >= N), and nothing scanned from the bundle', () => {
    const requires = rpmq('-qp', '--requires', built.rpm).trim().split('\n').map((l) => l.trim());
    assert.ok(requires.includes('nodejs(engine) >= 22'), requires.join('\n'));
    assert.equal(requires.some((r) => /^nodejs\s*>=/.test(r)), false);
    const unexpected = requires.filter((r) => !/^(nodejs\(engine\) >= 22|systemd|\/bin\/sh|rpmlib\(.*\).*)$/.test(r));
    assert.deepEqual(unexpected, [], 'AutoReqProv: no');
  });

  test('the files are what the project renders; the bundle is dist/ with an absolute node interpreter', () => {
    const root = path.join(dir, 'payload');
    mkdirSync(root);
    execFileSync('sh', ['-c', `rpm2cpio "${built.rpm}" | cpio -idm --quiet`], { cwd: root });
    assert.equal(readFileSync(path.join(root, 'usr/lib/systemd/system/sno-reconfigure.service'), 'utf8'), renderAgentUnit('rpm'));
    assert.match(renderAgentUnit('rpm'), /^ExecStart=\/usr\/bin\/node \/usr\/libexec\/sno-reconfigure\/sno-reconfigure\.cjs run$/m);
    assert.equal(readFileSync(path.join(root, 'usr/lib/systemd/system/kubelet.service.d/10-sno-reconfigure-hold.conf'), 'utf8'), renderKubeletHoldDropin());
    assert.match(readFileSync(path.join(root, 'usr/lib/systemd/system-preset/50-sno-reconfigure.preset'), 'utf8'), /^disable sno-reconfigure\.service$/m);
    const shipped = readFileSync(path.join(root, 'usr/libexec/sno-reconfigure/sno-reconfigure.cjs'), 'utf8');
    const source = readFileSync(bundle, 'utf8');
    assert.equal(shipped, source.replace(/^#!\/usr\/bin\/env node\n/, '#!/usr/bin/node\n'));
    const version = spawnSync(process.execPath, [path.join(root, 'usr/bin/sno-reconfigure'), '--version'], { encoding: 'utf8' });
    assert.equal(version.stdout.trim(), built.version, version.stderr);
  });

  test('scriptlets: preset on install, disable on erase, no restart on upgrade', () => {
    const scripts = rpmq('-qp', '--scripts', built.rpm);
    assert.match(scripts, /postinstall scriptlet[\s\S]*preset sno-reconfigure\.service/);
    assert.match(scripts, /preuninstall scriptlet[\s\S]*disable --now sno-reconfigure\.service/);
    const postun = scripts.split('postuninstall scriptlet')[1] ?? '';
    assert.doesNotMatch(postun.replace(/^#.*$/gm, ''), /restart/);
  });

  test('the epoch trap: an Epoch-1 nodejs 20 (end of life) does not satisfy the package, nodejs 22 does', () => {
    const fakeSpec = path.join(dir, 'fake-nodejs.spec');
    // What RHEL's nodejs declares (Epoch 1, nodejs(engine) without epoch); it also stands in for systemd and /bin/sh.
    writeFileSync(fakeSpec, 'Name: nodejs\nEpoch: 1\nVersion: %{v}\nRelease: 1\nSummary: fake nodejs\nLicense: MIT\nBuildArch: noarch\nProvides: nodejs(engine) = %{v}\nProvides: systemd\nProvides: /bin/sh\n%description\nfake\n%files\n');
    const verdict = (version: string): { code: number | null; out: string } => {
      const top = path.join(dir, `fake-${version}`);
      execFileSync('rpmbuild', ['-bb', '--define', `_topdir ${top}`, '--define', `v ${version}`, fakeSpec], { stdio: 'ignore' });
      const fake = path.join(top, 'RPMS', 'noarch', `nodejs-${version}-1.noarch.rpm`);
      const root = path.join(dir, `root-${version}`);
      const db = ['--root', root, '--dbpath', '/var/lib/rpm'];
      execFileSync('rpm', [...db, '--initdb'], { stdio: 'ignore' });
      execFileSync('rpm', [...db, '-i', '--justdb', '--nodeps', fake], { stdio: 'ignore' });
      assert.match(rpmq(...db, '-q', 'nodejs'), new RegExp(`^nodejs-${version.replace(/\./g, '\\.')}-1`));
      const res = spawnSync('rpm', [...db, '-i', '--test', built.rpm], { encoding: 'utf8' });
      return { code: res.status, out: `${res.stdout}${res.stderr}` };
    };
    const old = verdict('20.20.2');
    assert.notEqual(old.code, 0);
    assert.match(old.out, /nodejs\(engine\) >= 22 is needed by sno-reconfigure/);
    const current = verdict('22.12.0');
    assert.equal(current.code, 0, current.out);
  });
});
