// spec.ssh through whole runs against the simulator (issue 18): the site's keys are on the node before the
// network step, then in the MachineConfig 99-master-ssh (replace or keep), rolled out without a reboot; the
// early file goes once settle saw the pool updated; a re-run changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import { runAtNextStore, signedSiteConfigFiles, siteConfigFor, inScenario, startScenario, type Scenario } from '../../support/scenario';
import { FACTORY_SSH_KEY } from '../../support/standin-host';

const SITE_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILIuxglGbYZ7y5raTu96j18a5ek7uLZT+hcz5uSD8a8G field-ops@example.com';
const FILE_KEY = 'ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBE7lLw3+Zq0aGfyU3FQ9GEu8d5OZf2gnVzvLcCKQ4nq3W+X3YNVZ3pyX6y3Vv3nI8o7R0m9dZ2vXh0bCM0b7pHo= store@example.com';
const EARLY = 'var/home/core/.ssh/authorized_keys.d/sno-reconfigure';

const coreKeys = (s: Scenario): string[] => {
  const mc = s.sim.store.get(R.machineConfigs, '99-master-ssh') as { spec: { config: { passwd: { users: { name: string; sshAuthorizedKeys: string[] }[] } } } };
  return mc.spec.config.passwd.users.find((u) => u.name === 'core')!.sshAuthorizedKeys;
};

test('factoryKeys replace: keys on the node before the network, then only the site keys in 99-master-ssh, no reboot, early file removed', () =>
  inScenario(async (s) => {
    let reboots = 0;
    s.sim.events.on('reboot', () => reboots++);
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, {
      'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { ssh: { authorizedKeys: [SITE_KEY], authorizedKeysFile: 'core-keys.pub', factoryKeys: 'replace' }, timeouts: { settleStability: '2s' } } }),
      'core-keys.pub': `# store team\n${FILE_KEY}\n${SITE_KEY}\n`,
    }));
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    const messages = res.logs.map((l) => l.msg);
    const early = messages.findIndex((m) => /2 SSH key\(s\) of the site can log in as core, before the network changes; the factory's key keeps working until/.test(m));
    const network = res.logs.findIndex((l) => l.step === 'network');
    assert.ok(early >= 0 && network > early, `the early keys are written before the network step:\n${messages.slice(0, 12).join('\n')}`);
    assert.deepEqual(coreKeys(s), [SITE_KEY, FILE_KEY], "only the site's keys, each once");
    assert.equal(reboots, 0, 'an SSH key change does not reboot the node');
    assert.equal(existsSync(path.join(s.node.root, EARLY)), false, 'the early file is removed at the end');
    assert.ok(messages.some((m) => /removed the early SSH keys/.test(m)));
    assert.deepEqual(readFileSync(path.join(s.node.root, 'var/home/core/.ssh/authorized_keys.d/ignition'), 'utf8'), `${FACTORY_SSH_KEY}\n`, "Ignition's fragment is the MCD's, never touched");
    const report = JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/report.json'), 'utf8')) as { changes: { kind: string; target: string; action: string; detail?: string }[] };
    assert.deepEqual(report.changes.find((c) => c.kind === 'MachineConfig' && c.target === '99-master-ssh'), { kind: 'MachineConfig', target: '99-master-ssh', action: 'update', detail: "2 SSH key(s) for core, the factory's 1 key(s) removed; applied by the machine-config operator without a reboot" });

    rmSync(path.join(s.node.root, 'etc/sno-reconfigure/done'));
    const before = s.sim.api.requests.length;
    const again = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(again.code, 0, again.stdout.slice(-3000));
    assert.deepEqual(s.sim.api.requests.slice(before).filter((r: { method: string; path: string }) => r.method !== 'GET' && r.path.includes('machineconfigs')).map((r: { method: string; path: string }) => `${r.method} ${r.path}`), [], 'no second write of the MachineConfig');
  }));

test('the early file is 0600, owned by core, in a 0700 directory, and stays when the network step fails', () =>
  inScenario(async (s) => {
    // Stop the run after the early keys, where a wrong site network would leave it: the file must be usable then.
    s.node.fail('nmstatectl', 'the site network does not come up');
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { ssh: { authorizedKeys: [SITE_KEY], factoryKeys: 'keep' }, timeouts: { settleStability: '2s' } } }) }));
    const failed = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.notEqual(failed.code, 0);
    const file = path.join(s.node.root, EARLY);
    assert.equal(readFileSync(file, 'utf8'), `${SITE_KEY}\n`);
    const st = statSync(file);
    assert.equal(st.mode & 0o777, 0o600);
    assert.deepEqual([st.uid, st.gid], [1000, 1000], 'owned by core (uid and gid from /etc/passwd)');
    assert.equal(statSync(path.dirname(file)).mode & 0o777, 0o700);
  }));

test('factoryKeys keep: the factory key stays beside the site key in 99-master-ssh', () =>
  inScenario(async (s) => {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { ssh: { authorizedKeys: [SITE_KEY, FACTORY_SSH_KEY], factoryKeys: 'keep' }, timeouts: { settleStability: '2s' } } }) }));
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    assert.deepEqual(coreKeys(s), [FACTORY_SSH_KEY, SITE_KEY], 'the factory key first, the site key added, none twice');
  }));

// Issue 29 item 4: RHCOS 8 (OpenShift 4.12) has no ssh-key-dir, so sshd reads ~/.ssh/authorized_keys alone
// (machine-config-operator release-4.12 pkg/daemon/update.go). The early keys go there between marker lines and
// finish removes exactly those lines.
test('RHCOS 8: the early keys go into authorized_keys between markers, and finish removes exactly those lines', async () => {
  const s = await startScenario({ sim: { version: '4.12.30' } });
  try {
    writeFileSync(path.join(s.node.root, 'etc/os-release'), 'NAME="Red Hat Enterprise Linux CoreOS"\nID="rhcos"\nVERSION_ID="4.12"\nOPENSHIFT_VERSION="4.12"\nRHEL_VERSION="8.6"\n');
    const keysFile = path.join(s.node.root, 'var/home/core/.ssh/authorized_keys');
    const factory = `# installed by Ignition\n${FACTORY_SSH_KEY}\n`;
    writeFileSync(keysFile, factory, { mode: 0o600 });
    s.node.fail('nmstatectl', 'the site network does not come up');
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { ssh: { authorizedKeys: [SITE_KEY], factoryKeys: 'keep' }, timeouts: { settleStability: '2s' } } }) }));
    const failed = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.notEqual(failed.code, 0);
    const early = readFileSync(keysFile, 'utf8');
    assert.ok(early.startsWith(factory) && early.includes(`\n${SITE_KEY}\n`), `the site's key is in authorized_keys, after the factory's:\n${early}`);
    assert.equal(existsSync(path.join(s.node.root, EARLY)), false, 'no fragment: RHCOS 8 does not read authorized_keys.d');

    s.node.heal('nmstatectl');
    const done = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(done.code, 0, done.stdout.slice(-3000));
    assert.equal(readFileSync(keysFile, 'utf8'), factory, 'only the marked lines are removed');
  } finally {
    await s.cleanup();
  }
});

// The fourteenth hostile re-test of issue 36: store A's signed key still opened the node at store B, whose config asked
// for no keys, and store A's renewal timer kept running there. Each site's keys are the factory's and its own.
test("the next store's config without spec.ssh puts the factory's keys back, and one without the renewal timer disables the earlier store's", () =>
  inScenario(async (s) => {
    // The MachineConfig ships the renewal timer (disabled) in /etc/systemd/system.
    mkdirSync(path.join(s.node.root, 'etc/systemd/system'), { recursive: true });
    writeFileSync(path.join(s.node.root, 'etc/systemd/system/sno-reconfigure-renew.timer'), '[Timer]\nOnCalendar=daily\n');
    const storeA = siteConfigFor(s.sim, { extraSpec: { ssh: { authorizedKeys: [SITE_KEY], factoryKeys: 'keep' }, certificateRenewal: 'timer', timeouts: { settleStability: '2s' } } });
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': storeA }, { issued: '2026-11-01T09:00:00Z' }));
    const first = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(first.code, 0, first.stdout.slice(-3000));
    assert.deepEqual(coreKeys(s), [FACTORY_SSH_KEY, SITE_KEY]);
    assert.equal(s.node.units()['sno-reconfigure-renew.timer']?.enabled, 'enabled');

    // The fifteenth re-test: early keys a run of store A's left behind (one cut short) still logged in at store B.
    writeFileSync(path.join(s.node.root, EARLY), `${SITE_KEY}\n`);
    const second = await runAtNextStore(s);
    assert.equal(second.code, 0, second.stdout.slice(-3000));
    assert.deepEqual(coreKeys(s), [FACTORY_SSH_KEY], "store A's key is gone, the factory's is back");
    assert.equal(existsSync(path.join(s.node.root, EARLY)), false, "store A's early keys are gone");
    const removedEarly = second.logs.findIndex((l) => /removed an earlier site's early SSH keys, which no longer log in/.test(l.msg));
    assert.ok(removedEarly >= 0 && removedEarly < second.logs.findIndex((l) => l.step === 'network'), 'before the network step');
    assert.equal(s.node.units()['sno-reconfigure-renew.timer']?.enabled, 'disabled', "store A's renewal timer is off");
    const report = JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/report.json'), 'utf8')) as { changes: { kind: string; target: string; action: string; detail?: string }[] };
    assert.deepEqual(report.changes.find((c) => c.target === '99-master-ssh'), { kind: 'MachineConfig', target: '99-master-ssh', action: 'update', detail: "core's SSH keys back to the factory's 1, 1 key(s) of an earlier site removed; applied by the machine-config operator without a reboot" });
    assert.ok(s.node.calls('systemctl').some((c) => c.args.join(' ') === 'disable --now sno-reconfigure-renew.timer'));
  }));

test("a damaged record of the factory's keys stops the step in a sentence with the way out, and the keys stay as they are", () =>
  inScenario(async (s) => {
    // A folder where the record belongs is damaged too (the sixteenth: its generic "move it aside" made a new record
    // from an earlier site's keys); here a file that is no record.
    mkdirSync(path.join(s.node.root, 'var/lib/sno-reconfigure'), { recursive: true });
    writeFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/ssh-keys-factory.json'), '{"keys": "not a list"}');
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { ssh: { authorizedKeys: [SITE_KEY], factoryKeys: 'replace' }, timeouts: { settleStability: '2s' } } }) }));
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.notEqual(res.code, 0);
    assert.ok(res.logs.some((l) => /the record of core's SSH keys as the factory left it \(\/var\/lib\/sno-reconfigure\/ssh-keys-factory\.json\) is damaged/.test(l.msg) && l.step === 'ssh-early'), res.stdout.slice(-3000));
    // Found first, with the network as it was (the seventeenth: at its step, after the node had moved).
    assert.ok(!res.logs.some((l) => l.step === 'network'), 'the network step never ran');
    // A sentence with the way out (the fifteenth hostile re-test found it said as an internal error).
    assert.doesNotMatch(res.stdout + res.stderr, /internal error/);
    assert.match(res.stdout, /mv \/var\/lib\/sno-reconfigure\/ssh-keys-factory\.json \/var\/lib\/sno-reconfigure\/ssh-keys-factory\.json\.bad/);
    assert.deepEqual(coreKeys(s), [FACTORY_SSH_KEY]);
  }));

// The fifteenth: unsigned media take logins away and add none. Without spec.ssh they remove an earlier site's keys, and
// give back no factory key a signed `replace` removed.
test("unsigned media without spec.ssh remove an earlier site's keys and give back no factory key or password", async () => {
  const s = await startScenario();
  type Mc = KubeObject & { spec: { config: { passwd: { users: { name: string; sshAuthorizedKeys: string[]; passwordHash?: string }[] } } } };
  const mc = () => s.sim.store.get(R.machineConfigs, '99-master-ssh') as Mc;
  const withPassword = (hash: string | undefined) => {
    const next = structuredClone(mc());
    const core = next.spec.config.passwd.users.find((u) => u.name === 'core')!;
    if (hash === undefined) delete core.passwordHash;
    else core.passwordHash = hash;
    s.sim.store.update(R.machineConfigs, next);
  };
  try {
    // The seventeenth re-test: a factory that gives core a password, which the office at store A removes by hand.
    const factoryPassword = `$6$factory$${'f'.repeat(86)}`;
    withPassword(factoryPassword);
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { ssh: { authorizedKeys: [SITE_KEY], factoryKeys: 'replace' }, timeouts: { settleStability: '2s' } } }) }, { issued: '2026-11-01T09:00:00Z' }));
    assert.equal((await s.run(['--once'], { timeoutMs: 15 * 60_000 })).code, 0);
    assert.deepEqual(coreKeys(s), [SITE_KEY]);
    assert.equal(mc().spec.config.passwd.users.find((u) => u.name === 'core')?.passwordHash, factoryPassword, "replace keeps the factory's password");
    withPassword(undefined);

    const res = await runAtNextStore(s, { unsigned: true });
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    assert.deepEqual(coreKeys(s), [], "the earlier site's key is gone, and the factory's is not given back by unsigned media");
    assert.equal(mc().spec.config.passwd.users.find((u) => u.name === 'core')?.passwordHash, undefined, 'nor its password');
  } finally {
    await s.cleanup();
  }
});

// The seventeenth (Q3): store A's key in a MachineConfig of its own name, which the MCO merges in beside 99-master-ssh,
// still logged in at store B, and neither prepare nor the ssh-key step looked at it.
test("another MachineConfig giving core keys, whatever its name, is refused by name at the next store before the cluster changes, and 99-master-ssh is left as it was", () =>
  inScenario(async (s) => {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { ssh: { authorizedKeys: [SITE_KEY], factoryKeys: 'keep' }, timeouts: { settleStability: '2s' } } }) }, { issued: '2026-11-01T09:00:00Z' }));
    assert.equal((await s.run(['--once'], { timeoutMs: 15 * 60_000 })).code, 0);
    const mc = (name: string, passwd: unknown, labels: Record<string, string> = { 'machineconfiguration.openshift.io/role': 'master' }) => ({ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name, labels }, spec: { config: { ignition: { version: '3.2.0' }, passwd } } });
    s.sim.store.create(R.machineConfigs, mc('99-master-ssh-storea', { users: [{ name: 'core', sshAuthorizedKeys: [FILE_KEY] }] }));
    // The eighteenth: a hand-made one named like a rendered config, and one of a malformed shape (the MCO renders no
    // such config; it had crashed the step as an "internal error").
    // The nineteenth: with an ownerReference to the pool, as its own rendered configs have (the MCO selects by labels).
    const pool = s.sim.store.get(R.machineConfigPools, 'master')!;
    s.sim.store.create(R.machineConfigs, { ...mc('rendered-storea', { users: [{ name: 'core', passwordHash: '$6$storeA$x' }] }), metadata: { name: 'rendered-storea', labels: { 'machineconfiguration.openshift.io/role': 'master' }, ownerReferences: [{ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', name: 'master', uid: pool.metadata!.uid!, controller: true }] } });
    s.sim.store.create(R.machineConfigs, mc('50-master-odd', { users: { name: 'core', sshAuthorizedKeys: 'ssh-ed25519 x' } }));

    const res = await runAtNextStore(s);
    assert.notEqual(res.code, 0);
    // Found by step api, before the run's first change in the cluster (the eighteenth: at step ssh-key, after the domain).
    const refusal = res.logs.find((l) => l.step === 'api' && /the MachineConfig 99-master-ssh-storea, rendered-storea gives core SSH keys or a password besides 99-master-ssh: the machine-config operator adds them to the node, where no site-config can take them back/.test(l.msg));
    assert.ok(refusal, res.stdout.slice(-3000));
    assert.ok(!res.logs.some((l) => l.step === 'domain'), 'the domain step never ran');
    assert.match(res.stdout, /oc delete machineconfig 99-master-ssh-storea rendered-storea/);
    assert.doesNotMatch(res.stdout + res.stderr, /internal error/);
    assert.deepEqual(coreKeys(s), [FACTORY_SSH_KEY, SITE_KEY], 'unchanged: the step refused before writing');
  }));

// The seventeenth (K4/K7): a damaged record of kubeadmin's password was found at the kubeadmin step, after the network had
// moved, though the site-config asked for neither login.
test("a damaged record of kubeadmin's password stops the run before the network, even for a config without logins", () =>
  inScenario(async (s) => {
    mkdirSync(path.join(s.node.root, 'var/lib/sno-reconfigure'), { recursive: true });
    // A symlink that leads nowhere (the eighteenth: it was taken for no record, and one made anew from an earlier site's).
    symlinkSync('/var/lib/sno-reconfigure/gone.json', path.join(s.node.root, 'var/lib/sno-reconfigure/kubeadmin-factory.json'));
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { timeouts: { settleStability: '2s' } } }) }));
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.notEqual(res.code, 0);
    assert.ok(res.logs.some((l) => l.step === 'ssh-early' && /the record of kubeadmin's password as the factory left it \(\/var\/lib\/sno-reconfigure\/kubeadmin-factory\.json\) is damaged/.test(l.msg)), res.stdout.slice(-3000));
    assert.ok(!res.logs.some((l) => l.step === 'network'), 'the network step never ran');
    assert.doesNotMatch(res.stdout + res.stderr, /internal error/);
  }));

// The nineteenth: a MachineConfig added after prepare re-armed the node (a key file, here) went to the next store, since
// only prepare compared the pool's MachineConfigs with the factory's.
// The twentieth and twenty-first hostile re-tests of issue 36: a factory MachineConfig recorded by its content, changed
// at store A (a key file), passed step api when store A also wrote the controller's annotation on it (X7), or when
// store B's own signed manifest merged into it (X6) or replaced it with the factory's content (F1: the manifests step
// keeps fields a manifest does not name). All are refused, and a damaged record stops the run before the network (X1).
for (const dodge of ['a copied controller annotation', "the next store's signed manifest merged into it", "the next store's signed manifest replacing it"] as const) {
  test(`a factory MachineConfig changed at the last store is refused by step api, even with ${dodge}`, () =>
    inScenario(async (s) => {
      const role = 'machineconfiguration.openshift.io/role';
      const spec = { config: { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/office.conf', contents: { source: 'data:,office' }, mode: 420 }] } } };
      const pool = (s.sim.store.list(R.machineConfigs) as KubeObject[]).filter((m) => m.metadata?.labels?.[role] === 'master' && m.metadata.name !== '99-master-ssh');
      mkdirSync(path.join(s.node.root, 'var/lib/sno-reconfigure'), { recursive: true });
      const hash = createHash('sha256').update(JSON.stringify(spec)).digest('hex');
      writeFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/machineconfigs-factory.json'), JSON.stringify({ ...Object.fromEntries(pool.map((m) => [m.metadata!.name!, ''])), '50-master-office': hash }));
      const keyFile = { path: '/home/core/.ssh/authorized_keys.d/storea', contents: { source: 'data:,ssh-ed25519%20AAAA%20storeA' }, mode: 384 };
      const annotations: Record<string, string> = dodge === 'a copied controller annotation' ? { 'machineconfiguration.openshift.io/generated-by-controller-version': 'storea-1' } : {};
      s.sim.store.create(R.machineConfigs, { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name: '50-master-office', labels: { [role]: 'master' }, annotations }, spec: { config: { ...spec.config, storage: { files: [...spec.config.storage.files, keyFile] } } } });
      const merge = dodge.endsWith('replacing it')
        ? { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name: '50-master-office', labels: { [role]: 'master' } }, spec }
        : { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name: '50-master-office', labels: { [role]: 'master' }, annotations: { 'lca.openshift.io/apply-type': 'merge' } }, spec: { kernelArguments: ['nosmt'] } };
      const manifests = dodge === 'a copied controller annotation' ? {} : { extraManifestFiles: ['mc.yaml'] };
      const files = { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { timeouts: { settleStability: '2s' }, ...manifests } }), ...(dodge === 'a copied controller annotation' ? {} : { 'mc.yaml': stringify(merge) }) };
      s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, files));
      const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
      assert.notEqual(res.code, 0, res.stdout.slice(-3000));
      assert.ok(res.logs.some((l) => l.step === 'api' && /the MachineConfig 50-master-office was added or changed since prepare recorded the factory's/.test(l.msg)), res.stdout.slice(-3000));
      assert.ok(!res.logs.some((l) => l.step === 'domain' || l.step === 'manifests'), 'the cluster was not changed');
    }));
}

test("a damaged record of the pool's MachineConfigs stops the run at its first step, before the network", () =>
  inScenario(async (s) => {
    mkdirSync(path.join(s.node.root, 'var/lib/sno-reconfigure'), { recursive: true });
    writeFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/machineconfigs-factory.json'), 'garbage');
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim) }));
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.notEqual(res.code, 0);
    assert.ok(res.logs.some((l) => l.step === 'ssh-early' && l.level === 'error' && /machineconfigs-factory\.json/.test(l.msg)), res.stdout.slice(-3000));
    assert.deepEqual(s.node.calls('systemctl').filter((c) => c.args[0] === 'reboot'), [], 'no reboot for the network');
    assert.deepEqual(s.node.nmstateHistory(), []);
  }));

test("a MachineConfig added after prepare recorded the factory's is refused by step api, before the cluster changes", () =>
  inScenario(async (s) => {
    const role = 'machineconfiguration.openshift.io/role';
    // The record as prepare makes it here: the controllers' MachineConfigs by name alone (the simulator's seed).
    const pool = (s.sim.store.list(R.machineConfigs) as KubeObject[]).filter((m) => m.metadata?.labels?.[role] === 'master' && m.metadata.name !== '99-master-ssh');
    mkdirSync(path.join(s.node.root, 'var/lib/sno-reconfigure'), { recursive: true });
    writeFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/machineconfigs-factory.json'), JSON.stringify(Object.fromEntries(pool.map((m) => [m.metadata!.name!, '']))));
    s.sim.store.create(R.machineConfigs, { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name: '53-master-plain', labels: { [role]: 'master' } }, spec: { config: { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/home/core/.ssh/authorized_keys.d/storea', contents: { source: 'data:,ssh-ed25519%20AAAA%20storeA' }, mode: 384 }] } } } });
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { timeouts: { settleStability: '2s' } } }) }));
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.notEqual(res.code, 0);
    assert.ok(res.logs.some((l) => l.step === 'api' && /the MachineConfig 53-master-plain was added or changed since prepare recorded the factory's/.test(l.msg)), res.stdout.slice(-3000));
    assert.ok(!res.logs.some((l) => l.step === 'domain'), 'the domain step never ran');
    assert.match(res.stdout, /oc delete machineconfig 53-master-plain;[^\n]*then restart the service/);
  }));
