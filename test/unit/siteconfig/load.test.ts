import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { loadSiteConfig, validateEveryCandidate, type LoadResult } from '../../../src/siteconfig/load';
import { DEFAULT_TIMEOUTS, type LoadedSiteConfig } from '../../../src/siteconfig/types';
import { prepareCase, type PreparedCase } from './corpus';

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  await Promise.all(cleanups.map((c) => c()));
});

async function prepared(kind: 'valid' | 'invalid', name: string): Promise<PreparedCase> {
  const c = await prepareCase(kind, name);
  cleanups.push(c.cleanup);
  return c;
}

function valid(result: LoadResult): LoadedSiteConfig {
  assert.equal(result.status, 'valid', JSON.stringify(result, null, 1));
  return (result as { site: LoadedSiteConfig }).site;
}

async function tempDir(): Promise<string> {
  const d = await fs.mkdtemp(path.join(os.tmpdir(), 'sno-load-'));
  cleanups.push(() => fs.rm(d, { recursive: true, force: true }));
  return d;
}

test('the full site-config resolves every field, files read, timeouts in ms', async () => {
  const c = await prepared('valid', 'v02-full');
  const site = valid(await loadSiteConfig(c.location, { host: new LocalHost({ root: c.root }) }));
  const r = site.resolved;
  assert.equal(site.sourcePath, path.join(await fs.realpath(c.location), 'site-config.yaml'));
  assert.equal(r.name, 'store-0042');
  assert.deepEqual(r.match, { systemUUID: '4C4C4544-0042-3510-8052-B4C04F333231', serialNumber: 'ABC1234', macAddress: '52:54:00:12:34:56' });
  assert.equal(r.clusterName, 'sno1');
  assert.equal(r.hostname, 'sno1-node');
  assert.equal(r.baseDomain, 'store42.example.com');
  assert.deepEqual(r.network?.verify, { ping: ['192.168.42.1', 'fd00:42::1'], resolve: ['api.sno1.store42.example.com', 'registry.store42.example.com.'] });
  assert.equal((r.network?.nmstate.interfaces as Array<{ name: string }>)[0]!.name, 'eth0');
  assert.deepEqual(r.pullSecret, { auths: { 'quay.io': { auth: 'dXNlcjpwYXNzd29yZA==', email: 'ops@example.com' }, 'registry.store42.example.com:8443': { username: 'store', password: 's3cret' } } });
  assert.equal(r.pullSecretMode, 'replace');
  assert.deepEqual(r.imageDigestMirrors.map((m) => m.source), ['quay.io/openshift-release-dev/ocp-release', 'quay.io/openshift-release-dev/ocp-v4.0-art-dev']);
  assert.match(r.additionalTrustBundle!, /^-----BEGIN CERTIFICATE-----/);
  assert.match(r.certificates.api!.certPem, /BEGIN CERTIFICATE[\s\S]*BEGIN CERTIFICATE/);
  assert.match(r.certificates.ingress!.keyPem, /BEGIN PRIVATE KEY/);
  assert.deepEqual(r.timeouts, { network: 600_000, clock: 180_000, kubelet: 300_000, apiReady: 3_600_000, csr: 1_200_000, settle: 5_400_000, settleStability: 90_000 });
  assert.deepEqual(site.warnings, []);
});

test('imageTagMirrors resolve beside imageDigestMirrors, in the order given', async () => {
  const c = await prepared('valid', 'v21-tag-mirrors');
  const r = valid(await loadSiteConfig(c.location, { host: new LocalHost({ root: c.root }) })).resolved;
  assert.deepEqual(r.imageDigestMirrors, [{ source: 'registry.redhat.io/redhat', mirrors: ['registry.store42.example.com:8443/redhat'] }]);
  assert.deepEqual(r.imageTagMirrors, [
    { source: 'registry.redhat.io/redhat', mirrors: ['registry.store42.example.com:8443/redhat'] },
    { source: '*.quay.io', mirrors: ['registry.store42.example.com:8443/quay'] },
  ]);
});

test('defaults: merge, no mirrors, no certificates, DEFAULT_TIMEOUTS', async () => {
  const c = await prepared('valid', 'v01-minimal');
  const r = valid(await loadSiteConfig(c.location, { host: new LocalHost({ root: c.root }) })).resolved;
  assert.deepEqual(r, { name: 'minimal', baseDomain: 'store42.example.com', pullSecretMode: 'merge', imageDigestMirrors: [], certificates: {}, timeouts: DEFAULT_TIMEOUTS });
});

test('the digest covers the site-config and its files, wherever they are', async () => {
  const c = await prepared('valid', 'v04-nmstate-file');
  const host = new LocalHost({ root: c.root });
  const first = valid(await loadSiteConfig(c.location, { host }));
  const copy = path.join(await tempDir(), 'copy');
  await fs.cp(c.location, copy, { recursive: true });
  assert.equal(valid(await loadSiteConfig(copy, { host })).digest, first.digest, 'a copy elsewhere has the same digest');
  await fs.appendFile(path.join(copy, 'network/site.yaml'), '# a comment\n');
  assert.notEqual(valid(await loadSiteConfig(copy, { host })).digest, first.digest, 'a changed referenced file changes the digest');
});

test('the time of validation decides expiry', async () => {
  const c = await prepared('valid', 'v07-certificates');
  const host = new LocalHost({ root: c.root });
  const later = await loadSiteConfig(c.location, { host, now: new Date('2200-01-01T00:00:00Z') });
  assert.equal(later.status, 'invalid');
  assert.ok(later.status === 'invalid' && later.errors.some((e) => e.path === 'spec.certificates.api.certFile' && /expired on/.test(e.message)));
});

// Issue 36, finding 1: the node's copy of the media follows no link, so validate follows none either, even one
// that stays inside, and a linked folder is caught, not only a linked last name.
test('a referenced file is refused when it, or a folder on its way, is a symbolic link, even one staying inside', async () => {
  const c = await prepared('valid', 'v15-file-location');
  const dir = path.dirname(c.location);
  await fs.mkdir(path.join(dir, 'real'));
  await fs.rename(path.join(dir, 'net.yaml'), path.join(dir, 'real', 'net.yaml'));
  await fs.symlink('real/net.yaml', path.join(dir, 'net.yaml'));
  const linked = await loadSiteConfig(c.location, { host: new LocalHost({ root: c.root }) });
  assert.ok(linked.status === 'invalid' && linked.errors.some((e) => e.message === "'net.yaml' is a symbolic link; links on site-config media are not followed (the node refuses them): copy the real file there"), JSON.stringify(linked));
  await fs.rm(path.join(dir, 'net.yaml'));
  await fs.symlink('real', path.join(dir, 'net'));
  await fs.writeFile(c.location, (await fs.readFile(c.location, 'utf8')).replace('net.yaml', 'net/net.yaml'));
  const folder = await loadSiteConfig(c.location, { host: new LocalHost({ root: c.root }) });
  assert.ok(folder.status === 'invalid' && folder.errors.some((e) => e.message === "'net/net.yaml' is read through net, which is a symbolic link; links on site-config media are not followed (the node refuses them): copy the real folder there"), JSON.stringify(folder));
});

test('a machine-specific site-config for another machine is "not for this machine", before its other problems', async () => {
  const dir = await tempDir();
  await fs.writeFile(path.join(dir, 'site-config.yaml'), 'apiVersion: sno-reconfigure.io/v1\nkind: SiteConfig\nmetadata: {name: x}\nspec:\n  match: {serialNumber: S1}\n  baseDomain: BAD\n');
  const result = await loadSiteConfig(dir, { host: new LocalHost({ root: dir }), identity: { serialNumber: 'S2', macAddresses: [] } });
  assert.deepEqual(result, { status: 'not-for-this-machine', reasons: ["site-config.yaml: serialNumber S1 does not match this machine's S2"] });
});

test('site-configs/: an unreadable candidate is a warning when another one fits', async () => {
  const dir = await tempDir();
  await fs.mkdir(path.join(dir, 'site-configs'));
  await fs.writeFile(path.join(dir, 'site-configs', 'a.yaml'), 'apiVersion: sno-reconfigure.io/v1\nkind: SiteConfig\nmetadata: {name: a}\nspec:\n  match: {serialNumber: S1}\n  clusterName: sno1\n  baseDomain: a.example.com\n');
  await fs.writeFile(path.join(dir, 'site-configs', 'b.yaml'), 'spec: [\n');
  await fs.symlink('/etc/hostname', path.join(dir, 'site-configs', 'c.yaml'));
  const site = valid(await loadSiteConfig(dir, { host: new LocalHost({ root: dir }), identity: { serialNumber: 'S1', macAddresses: [] } }));
  assert.equal(site.resolved.name, 'a');
  assert.deepEqual(site.warnings.map((w) => w.path), ['site-configs/b.yaml', 'site-configs/c.yaml']);
  assert.match(site.warnings[1]!.message, /is a symbolic link, not a file; copy the real file onto it/);
});

test('validateEveryCandidate checks every machine\'s file, ignoring spec.match', async () => {
  const c = await prepared('valid', 'v08-multi-machine');
  const reports = await validateEveryCandidate(c.location, { host: new LocalHost({ root: await tempDir() }) });
  assert.deepEqual(reports.map((r) => [r.display, r.valid]), [
    ['site-configs/store-0041.yaml', true],
    ['site-configs/store-0042.yaml', true],
    ['site-configs/store-0043.yml', true],
  ]);
});

test('a location that does not exist', async () => {
  const missing = path.join(await tempDir(), 'nope');
  assert.deepEqual(await loadSiteConfig(missing, { host: new LocalHost({ root: '/' }) }), { status: 'invalid', errors: [{ path: missing, message: 'does not exist' }], warnings: [] });
});

// Issue 36 (weak, reported by the hostile test): a config bound to a firmware default was taken by every machine
// carrying the same default. Bound that way it is refused, on a machine with that very default too.
test('spec.match naming a firmware default (serial or system UUID) is refused, even on a machine that carries it', async () => {
  for (const [field, value] of [
    ['serialNumber', 'To Be Filled By O.E.M.'],
    ['serialNumber', 'Default string'],
    ['serialNumber', '0000000000'],
    ['systemUUID', '03000200-0400-0500-0006-000700080009'],
    // The same AMI default as Linux shows it from firmware older than SMBIOS 2.6 (the hostile re-test of issue 36).
    ['systemUUID', '00020003-0004-0005-0006-000700080009'],
    ['systemUUID', '00000000-0000-0000-0000-000000000000'],
  ] as const) {
    // The machine carries that very default.
    const machine = { [field]: value, macAddresses: [] as string[] };
    const dir = await tempDir();
    await fs.writeFile(path.join(dir, 'site-config.yaml'), `apiVersion: sno-reconfigure.io/v1\nkind: SiteConfig\nmetadata: {name: x}\nspec:\n  match: {${field}: '${value}'}\n  baseDomain: store42.example.com\n`);
    const result = await loadSiteConfig(dir, { host: new LocalHost({ root: dir }), identity: machine });
    assert.equal(result.status, 'invalid', `${field} ${value}: ${JSON.stringify(result)}`);
    const errors = result.status === 'invalid' ? result.errors : [];
    assert.ok(errors.some((e) => e.path === `spec.match.${field}` && e.message.startsWith(`'${value}' is a firmware default, not a machine's own: every machine shipped with it would match`)), JSON.stringify(errors));
  }
  // A real serial that merely contains a default's words is a serial.
  const dir = await tempDir();
  await fs.writeFile(path.join(dir, 'site-config.yaml'), "apiVersion: sno-reconfigure.io/v1\nkind: SiteConfig\nmetadata: {name: x}\nspec:\n  match: {serialNumber: 'CZ2042XYZ'}\n  baseDomain: store42.example.com\n");
  assert.equal((await loadSiteConfig(dir, { host: new LocalHost({ root: dir }), identity: { serialNumber: 'CZ2042XYZ', macAddresses: [] } })).status, 'valid');
});

// The tenth hostile re-test of issue 36 (M2): validate and plan followed a link inside the media that run refuses
// (media.ts copyTree never follows one), so the office was told media were good that the node would refuse.
test('a site-config.yaml, a site-configs/ entry or the site-configs folder that is a link inside the media is refused as run refuses it', async () => {
  const config = 'apiVersion: sno-reconfigure.io/v1\nkind: SiteConfig\nmetadata: {name: a}\nspec:\n  clusterName: sno1\n  baseDomain: a.example.com\n';
  const top = await tempDir();
  await fs.writeFile(path.join(top, 'real.yaml'), config);
  await fs.symlink('real.yaml', path.join(top, 'site-config.yaml'));
  assert.deepEqual(await loadSiteConfig(top, { host: new LocalHost({ root: top }) }), { status: 'invalid', errors: [{ path: top, message: 'holds site-config.yaml as a symbolic link, not a file; copy the real file onto it (links on the media are never followed)' }], warnings: [] });
  const folder = await tempDir();
  await fs.mkdir(path.join(folder, 'configs'));
  await fs.writeFile(path.join(folder, 'configs', 'a.yaml'), config);
  await fs.symlink('configs', path.join(folder, 'site-configs'));
  const linkedFolder = await loadSiteConfig(folder, { host: new LocalHost({ root: folder }) });
  assert.equal(linkedFolder.status, 'invalid');
  assert.match(JSON.stringify(linkedFolder), /holds site-configs as a symbolic link, not a folder; copy the real folder onto it/);
  const entry = await tempDir();
  await fs.mkdir(path.join(entry, 'site-configs'));
  await fs.writeFile(path.join(entry, 'real.yaml'), config);
  await fs.symlink('../real.yaml', path.join(entry, 'site-configs', 'a.yaml'));
  const linkedEntry = await loadSiteConfig(entry, { host: new LocalHost({ root: entry }) });
  assert.notEqual(linkedEntry.status, 'valid');
  assert.match(JSON.stringify(linkedEntry), /is a symbolic link, not a file; copy the real file onto it/);
});
