// `sno-reconfigure validate` through its Command object (the bundle is exercised in
// test/integration/validate-bundle.test.ts): exit codes, human output, the --json contract.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { EXIT_USAGE, UsageError, parseCommandArgs, type CliIo } from '../../../src/cli/command';
import { validateCommand } from '../../../src/cli/commands/validate';
import { prepareCase } from './corpus';

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  await Promise.all(cleanups.map((c) => c()));
});

async function run(argv: string[], cwd = process.cwd()): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = { out: (s) => (out += s), err: (s) => (err += s), env: {}, cwd };
  try {
    const args = parseCommandArgs(validateCommand, argv);
    if (args.values.help === true) return { code: 0, out: validateCommand.help, err };
    return { code: await validateCommand.run(args, io), out, err };
  } catch (e) {
    if (e instanceof UsageError) return { code: EXIT_USAGE, out, err: e.message };
    throw e;
  }
}

async function caseDir(kind: 'valid' | 'invalid', name: string) {
  const c = await prepareCase(kind, name);
  cleanups.push(c.cleanup);
  return c;
}

test('usage errors exit 2', async () => {
  assert.equal((await run([])).code, 2);
  assert.match((await run([])).err, /missing PATH/);
  assert.equal((await run(['a', 'b'])).code, 2);
  assert.equal((await run(['a', '--bogus'])).code, 2);
  const root = path.join(os.tmpdir(), `sno-no-such-root-${process.pid}`);
  assert.match((await run(['a', '--root', root])).err, /no such directory/);
});

test('--help explains the command with an example', async () => {
  const { code, out } = await run(['--help']);
  assert.equal(code, 0);
  assert.match(out, /Usage: sno-reconfigure validate PATH/);
  assert.match(out, /Examples:\n {2}sno-reconfigure validate/);
});

test('a valid site-config: exit 0 and a one-line summary', async () => {
  const c = await caseDir('valid', 'v03-network-inline');
  const { code, out } = await run([c.location, '--root', c.root]);
  assert.equal(code, 0);
  assert.match(out, /site-config\.yaml: valid — site "net-inline", cluster domain sno1\.store42\.example\.com/);
});

test('an invalid site-config: exit 1 and every problem with its location', async () => {
  const c = await caseDir('invalid', 'i140-many-problems');
  const { code, out } = await run([c.location, '--root', c.root]);
  assert.equal(code, 1);
  assert.match(out, /INVALID — 11 errors, 1 warning/);
  assert.match(out, /\n {2}spec\.network\.nmstate\.interfaces\[0\]\.ipv4\.address\[0\]\.ip: '10\.0\.0\.256' is not a valid IPv4 address\n/);
  assert.equal(out.split('\n').filter((l) => l.startsWith('  spec.')).length, 12);
});

test('a site-config with thousands of unknown fields: the first 100 are listed, one more line says how many are not', async () => {
  const c = await caseDir('valid', 'v01-minimal');
  const file = path.join(c.location, 'site-config.yaml');
  const extra = Array.from({ length: 3000 }, (_, i) => `  unknownField${i}: ${i}`).join('\n');
  await fs.writeFile(file, `${await fs.readFile(file, 'utf8')}${extra}\n`);
  const { code, out } = await run([c.location, '--json', '--root', c.root]);
  assert.equal(code, 1);
  const errors = (JSON.parse(out) as { errors: { path: string; message: string }[] }).errors;
  assert.equal(errors.length, 101);
  assert.equal(errors[0]!.path, 'spec.unknownField0');
  assert.deepEqual(errors[100], { path: 'spec.unknownField100', message: 'and 2900 more from here on are not listed: correct the ones above and check the file again' });
  const human = await run([c.location, '--root', c.root]);
  assert.equal(human.out.split('\n').filter((l) => l.startsWith('  spec.unknownField')).length, 101);
  assert.match(human.out, /\n {2}spec\.unknownField100: and 2900 more from here on are not listed: correct the ones above and check the file again\n/);
});

test('--json prints exactly the contract shape (plus status, source and notes: the key that verified the signature, who sealed files are for)', async () => {
  const c = await caseDir('invalid', 'i005-typo-basedomain');
  const { code, out } = await run([c.location, '--json', '--root', c.root]);
  assert.equal(code, 1);
  const report = JSON.parse(out) as Record<string, unknown>;
  assert.deepEqual(Object.keys(report).sort(), ['errors', 'for', 'notes', 'source', 'status', 'valid', 'warnings']);
  assert.equal(report.for, 'any machine (no spec.match)');
  assert.equal(report.valid, false);
  assert.equal(report.status, 'invalid');
  assert.deepEqual(report.errors, [
    { path: 'spec.baseDomain', message: 'is required' },
    { path: 'spec.baseDomian', message: "unknown field 'baseDomian' — did you mean 'baseDomain'?" },
  ]);
  assert.deepEqual(report.warnings, []);
  const v = await caseDir('valid', 'v01-minimal');
  const ok = JSON.parse((await run([v.location, '--json', '--root', v.root])).out) as { valid: boolean; errors: unknown[]; warnings: Array<Record<string, unknown>> };
  assert.equal(ok.valid, true);
  assert.deepEqual(ok.errors, []);
  assert.deepEqual(Object.keys(ok.warnings[0]!).sort(), ['message', 'path']);
});

test('--this-machine: not for this machine is exit 1, and it says so', async () => {
  const c = await caseDir('invalid', 'i113-multi-none-match');
  const human = await run([c.location, '--this-machine', '--root', c.root]);
  assert.equal(human.code, 1);
  assert.match(human.out, /NOT FOR THIS MACHINE/);
  const json = JSON.parse((await run([c.location, '--json', '--this-machine', '--root', c.root])).out) as { status: string; errors: Array<{ path: string; message: string }> };
  assert.equal(json.status, 'not-for-this-machine');
  assert.deepEqual(json.errors.map((e) => e.path), ['site-configs/a.yaml', 'site-configs/b.yaml']);
  assert.match(json.errors[0]!.message, /^not for this machine: serialNumber S1/);
});

test('on a workstation every site-config is judged on its content, and the output says which machine each is for', async () => {
  const c = await caseDir('invalid', 'i113-multi-none-match');
  const all = await run([c.location, '--root', c.root]);
  assert.equal(all.code, 0, all.out);
  assert.match(all.out, /site-configs\/a\.yaml: valid — for the machine with serial number S1/);
  assert.match(all.out, /all 2 site-configs valid/);
  assert.equal((await run([c.location, '--any-machine', '--root', c.root])).code, 0, 'the old flag still works: it is the default now');
  await fs.writeFile(path.join(c.location, 'site-configs', 'b.yaml'), 'apiVersion: sno-reconfigure.io/v1\nkind: SiteConfig\nmetadata: {name: b}\nspec: {baseDomain: x..y}\n');
  const json = JSON.parse((await run([c.location, '--json', '--root', c.root])).out) as { valid: boolean; errors: Array<{ path: string }>; files: Array<{ path: string; valid: boolean; for?: string }> };
  assert.equal(json.valid, false);
  assert.deepEqual(json.files.map((f) => [f.path, f.valid, f.for]), [['site-configs/a.yaml', true, 'the machine with serial number S1'], ['site-configs/b.yaml', false, 'any machine (no spec.match)']]);
  assert.deepEqual(json.errors.map((e) => e.path), ['site-configs/b.yaml:spec.baseDomain']);
  const single = await caseDir('valid', 'v01-minimal');
  assert.match((await run([single.location, '--root', single.root])).out, /: valid — site ".*", cluster domain .*, for any machine \(no spec\.match\)/);
});

test('--trusted-key: a missing or foreign signature is an error, as on a node holding that key; several keys may be given', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'validate-keys-'));
  try {
    const c = await caseDir('valid', 'v01-minimal');
    const key = (name: string) => {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      return { name, privateKey, pub: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
    };
    const ours = key('ours');
    const theirs = key('theirs');
    for (const k of [ours, theirs]) await fs.writeFile(path.join(dir, `${k.name}.pub.pem`), k.pub);
    const file = path.join(c.location, 'site-config.yaml');
    // Signed means bound (src/siteconfig/trust.ts): a signed config names its machine and when it was issued.
    const doc = parseDocument(await fs.readFile(file, 'utf8'));
    doc.setIn(['metadata', 'issued'], '2026-11-01T09:00:00Z');
    doc.setIn(['spec', 'match'], { serialNumber: 'S1' });
    await fs.writeFile(file, doc.toString());
    const unsigned = await run([c.location, '--trusted-key', path.join(dir, 'ours.pub.pem')]);
    assert.equal(unsigned.code, 1);
    assert.match(unsigned.out, /site-config\.yaml\.sig: .*must be signed/);
    await fs.writeFile(`${file}.sig`, sign(null, await fs.readFile(file), theirs.privateKey).toString('base64'));
    const foreign = await run([c.location, '--trusted-key', path.join(dir, 'ours.pub.pem')]);
    assert.equal(foreign.code, 1);
    assert.match(foreign.out, /does not verify/);
    const both = await run([c.location, '--trusted-key', path.join(dir, 'ours.pub.pem'), '--trusted-key', path.join(dir, 'theirs.pub.pem')]);
    assert.equal(both.code, 0, both.out);
    const missing = await run([c.location, '--trusted-key', path.join(dir, 'nope.pem')]);
    assert.equal(missing.code, 2);
    assert.match(missing.err, /--trusted-key .*nope\.pem: .*(no such file|does not exist)/);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('a relative PATH is resolved against the working directory', async () => {
  const c = await caseDir('valid', 'v12-json');
  const { code, out } = await run(['.', '--root', c.root], c.location);
  assert.equal(code, 0, out);
});

// The config ISO as openshift-install image-based create config-image lays it out (openshift/installer
// pkg/asset/imagebased/configimage: configiso.go creates extra-manifests/ on every ISO, empty when the site has
// none; clusterconfiguration.go writes chrony_config as its default chrony.conf plus the site's servers;
// imagedigestsources.go the install-config's imageDigestSources list). Go's omitempty drops unset fields; a
// hand-made manifest.json may say null instead, which means the same.
test('an image-based install config ISO as openshift-install writes it: an empty extra-manifests/ and null fields are fine', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sno-ibi-'));
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
  await fs.mkdir(path.join(dir, 'cluster-configuration/manifests'), { recursive: true });
  await fs.mkdir(path.join(dir, 'extra-manifests'));
  const manifest = {
    api_version: 1,
    base_domain: 'store42.example.com',
    cluster_name: 'sno1',
    cluster_id: '5f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0',
    infra_id: 'sno1-x7k2p',
    hostname: 'sno1-node',
    // No kubeadmin_password_hash: a new kubeadmin password needs signed media (this volume is unsigned).
    pull_secret: JSON.stringify({ auths: { 'registry.store42.example.com:8443': { auth: Buffer.from('u:p').toString('base64') } } }),
    chrony_config: '\npool 0.rhel.pool.ntp.org iburst\ndriftfile /var/lib/chrony/drift\nmakestep 1.0 3\nrtcsync\nlogdir /var/log/chrony\nserver 10.20.0.5 iburst',
    additionalTrustBundle: { userCaBundle: '', proxyConfigmapName: '', proxyConfigmapBundle: '' },
    proxy: null,
    status_proxy: null,
    node_labels: null,
  };
  await fs.writeFile(path.join(dir, 'cluster-configuration/manifest.json'), JSON.stringify(manifest));
  await fs.writeFile(path.join(dir, 'cluster-configuration/manifests/image-digest-sources.json'), JSON.stringify([{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'], sourcePolicy: '' }]));
  const { code, out } = await run([dir]);
  assert.equal(code, 0, out);
  assert.match(out, /^cluster-configuration\/manifest\.json: valid, 2 warnings/m);
  assert.match(out, /infra_id: is not applied/);
  assert.match(out, /chrony_config: pool 0\.rhel\.pool\.ntp\.org is RHEL's public pool/);
});
