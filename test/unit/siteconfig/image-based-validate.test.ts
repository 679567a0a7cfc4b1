// `validate --json` on image-based install media (cluster-configuration/manifest.json and its manifests/): every
// input gets the contract's report, never an internal error, and each problem names what the person wrote in
// manifest.json (kubeadmin_password_hash, ssh_key, raw_nm_state_config), not the site-config field it maps to.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../../src/cli/cli';
import { signedImageBasedMedia } from '../../support/signed-media';
import { validateFolder } from '../../support/validate-folder';
import { LocalHost } from '../../../src/host/host';
import { loadSiteConfig } from '../../../src/siteconfig/load';

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  await Promise.all(cleanups.map((c) => c()));
});

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILIuxglGbYZ7y5raTu96j18a5ek7uLZT+hcz5uSD8a8G field-ops@example.com';
// Unsigned media (no trusted keys under the root): only what unsigned media may carry (src/siteconfig/trust.ts).
const BASE = {
  api_version: 1,
  base_domain: 'store42.example.com',
  cluster_name: 'sno1',
  hostname: 'sno1-node',
  raw_nm_state_config: 'interfaces:\n- name: eno1\n  type: ethernet\n  state: up\n  ipv4: {enabled: true, dhcp: false, address: [{ip: 192.168.111.20, prefix-length: 24}]}\n',
};

interface Report {
  valid: boolean;
  errors: { path: string; message: string }[];
  warnings: { path: string; message: string }[];
}

/** A config volume as openshift-install lays it out, with `manifest` as manifest.json and `manifests` in manifests/. */
async function validateVolume(manifest: unknown, manifests: Record<string, string> = {}): Promise<{ code: number; report: Report; stderr: string }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sno-ibi-'));
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
  await fs.mkdir(path.join(dir, 'cluster-configuration/manifests'), { recursive: true });
  await fs.writeFile(path.join(dir, 'cluster-configuration/manifest.json'), typeof manifest === 'string' ? manifest : JSON.stringify(manifest));
  for (const [name, text] of Object.entries(manifests)) await fs.writeFile(path.join(dir, 'cluster-configuration/manifests', name), text);
  let stdout = '';
  let stderr = '';
  const code = await runCli(['validate', dir, '--json', '--root', dir], { out: (s) => (stdout += s), err: (s) => (stderr += s), env: {}, cwd: dir });
  assert.doesNotMatch(stderr, /internal error/);
  return { code, report: JSON.parse(stdout) as Report, stderr };
}

const SOURCES = 'cluster-configuration/manifests/image-digest-sources.json';

test('an image-digest-sources.json that is not JSON is a located error in the --json report, not an internal error', async () => {
  const { code, report } = await validateVolume(BASE, { 'image-digest-sources.json': 'This is not a JSON file' });
  assert.equal(code, 1);
  assert.deepEqual(report.errors, [{ path: SOURCES, message: 'is not valid JSON: openshift-install writes this file as a JSON list of {source, mirrors} entries' }]);
});

test('image-digest-sources.json entries without source, or of the wrong shape, are located errors', async () => {
  const { code, report } = await validateVolume(BASE, { 'image-digest-sources.json': JSON.stringify([{ wrongField: 'x' }, { source: 'quay.io/ocp', mirrors: 'mirror.example.com' }, 'quay.io', { source: 'quay.io/x', mirrors: [3] }]) });
  assert.equal(code, 1);
  const found = report.errors.map((e) => `${e.path}: ${e.message}`);
  for (const expected of [`${SOURCES}: [0]: unknown field 'wrongField'`, `${SOURCES}[0].source: is required`, `${SOURCES}[1].mirrors: expected a list`, `${SOURCES}: [2]: expected a mapping with source and mirrors, got a string`, `${SOURCES}[3].mirrors[0]: expected a string`]) {
    assert.ok(found.some((f) => f.startsWith(expected)), `${expected} in ${found.join('\n')}`);
  }
});

test('manifests/ objects that are no mirror sets, or mirror sets without their list, are located errors', async () => {
  for (const text of ['null', '42', '{"kind": "ImageDigestMirrorSet", "metadata": {"name": "m"}}', '{"kind": "ImageContentSourcePolicy", "spec": {"repositoryDigestMirrors": [{}]}}', '{"items": [7]}', '[{"kind": "ConfigMap"}, 3]']) {
    const { code, report } = await validateVolume(BASE, { 'mirrors.yaml': text });
    assert.equal(code, 1, text);
    assert.ok(report.errors.length > 0 && report.errors.every((e) => e.path.startsWith('cluster-configuration/manifests/mirrors.yaml')), `${text}: ${JSON.stringify(report.errors)}`);
  }
});

test('a manifest.json without api_version is judged as a SeedReconfiguration: "api_version is required (1)", nothing about SiteConfig', async () => {
  const { code, report } = await validateVolume({ 'some-unknown-field': 'withsomevalue' });
  assert.equal(code, 1);
  assert.deepEqual(report.errors, [{ path: 'api_version', message: "is required (1): cluster-configuration/manifest.json is image-based install's SeedReconfiguration, version 1" }]);
});

test('problems in manifest.json name the field the person wrote there, not the site-config field it became', async () => {
  const { code, report } = await validateVolume({
    ...BASE,
    kubeadmin_password_hash: 'not-a-bcrypt-hash',
    ssh_key: `# the office's key\n${KEY}\nssh-rsa not-base64!! broken`,
    raw_nm_state_config: BASE.raw_nm_state_config.replace('192.168.111.20', '192.168.111.300'),
    node_labels: { 'bad label!': 'x' },
  });
  assert.equal(code, 1);
  const paths = report.errors.map((e) => e.path);
  assert.ok(paths.includes('kubeadmin_password_hash'), paths.join(', '));
  assert.ok(paths.includes('ssh_key (line 3)'), paths.join(', '));
  assert.ok(paths.includes('raw_nm_state_config.interfaces[0].ipv4.address[0].ip'), paths.join(', '));
  assert.ok(paths.some((p) => p.startsWith('node_labels')), paths.join(', '));
  assert.deepEqual(paths.filter((p) => p.startsWith('spec.')), [], 'no translated field is named');
});

test('manifest.json fields of the wrong type are refused as Go would, and unknown ones are warned about', async () => {
  const { code, report } = await validateVolume({ ...BASE, cluster_name: 7, proxy: 'http://proxy', node_ips: ['192.168.111.20', 5], DummyField: 'x' });
  assert.equal(code, 1);
  assert.deepEqual(report.errors.map((e) => e.path).sort(), ['cluster_name', 'node_ips', 'proxy']);
  assert.match(report.errors.find((e) => e.path === 'proxy')!.message, /^expected a mapping, got a string/);
  assert.ok(report.warnings.some((w) => w.path === 'DummyField' && /ignored/.test(w.message)));
});

test('a manifest.json that is not a JSON object says so, naming the file', async () => {
  for (const text of ['This is not a JSON file', '[1, 2]', '42']) {
    const { code, report } = await validateVolume(text);
    assert.equal(code, 1);
    assert.deepEqual(report.errors.map((e) => e.path), ['cluster-configuration/manifest.json'], text);
    assert.match(report.errors[0]!.message, /^is not a JSON object \(got .*\): image-based install writes its SeedReconfiguration here$/);
  }
});

// Issue 36: image-based media on a node that requires signatures. manifest.json.sig covers manifest.json's bytes;
// its sno_reconfigure field binds it (match, issued) and pins the mirror sets and extra manifests beside it.
const MIRRORS = JSON.stringify([{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'] }]);
const EXTRA = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: store-settings, namespace: default}\ndata: {store: "42"}\n';

/** The files of a signed image-based volume (keys trusted under the volume as --root), then `change` applied after signing. */
async function validateSigned(opts: Parameters<typeof signedImageBasedMedia>[2] & { change?: Record<string, string> } = {}): Promise<{ code: number; report: Report }> {
  return validateFolder((dir) => ({ ...signedImageBasedMedia(dir, { 'cluster-configuration/manifest.json': JSON.stringify(BASE), [SOURCES]: MIRRORS, 'extra-manifests/settings.yaml': EXTRA }, opts), ...opts.change }), cleanups, 'sno-ibi-signed-');
}

test('signed image-based media whose manifest.json binds and pins its mirror sets and extra manifests are valid on a node that requires signatures', async () => {
  const { code, report } = await validateSigned();
  assert.deepEqual(report.errors, []);
  assert.equal(code, 0);
  assert.deepEqual(report.warnings.filter((w) => w.path.startsWith('sno_reconfigure')), [], 'sno_reconfigure is a known field');
});

test('an unpinned mirror set of signed image-based media is refused on a node that requires signatures, naming the file and where to pin it', async () => {
  const { code, report } = await validateSigned({ unpinned: [SOURCES] });
  assert.equal(code, 1);
  assert.deepEqual(report.errors.map((e) => e.path), [SOURCES]);
  assert.match(report.errors[0]!.message, /^this node requires signed media, so 'manifests\/image-digest-sources\.json' must be pinned in sno_reconfigure\.sha256 \(its sha256 is [0-9a-f]{64}\)$/);
});

test('a mirror set or extra manifest changed after signing is refused by name', async () => {
  const mirrors = await validateSigned({ change: { [SOURCES]: MIRRORS.replace('registry.store42', 'evil.example') } });
  assert.equal(mirrors.code, 1);
  assert.deepEqual(mirrors.report.errors.map((e) => e.path), [SOURCES]);
  assert.match(mirrors.report.errors[0]!.message, /^sha256 of 'manifests\/image-digest-sources\.json' is [0-9a-f]{64}, but sno_reconfigure\.sha256 pins [0-9a-f]{64}: the file was changed after the site-config was written$/);
  const extra = await validateSigned({ change: { 'extra-manifests/settings.yaml': EXTRA.replace('"42"', '"43"') } });
  assert.equal(extra.code, 1);
  assert.deepEqual(extra.report.errors.map((e) => e.path), ['extra-manifests/']);
  assert.match(extra.report.errors[0]!.message, /^sha256 of '\.\.\/extra-manifests\/settings\.yaml' is [0-9a-f]{64}, but sno_reconfigure\.sha256 pins/);
});

test('signed image-based media are bound like a signed site-config: without sno_reconfigure.match and .issued they are refused', async () => {
  const { code, report } = await validateSigned({ binding: {} });
  assert.equal(code, 1);
  const paths = report.errors.map((e) => e.path);
  assert.ok(paths.includes('sno_reconfigure.match'), paths.join(', '));
  assert.ok(paths.includes('sno_reconfigure.issued'), paths.join(', '));
  assert.match(report.errors.find((e) => e.path === 'sno_reconfigure.match')!.message, /^is required on signed media: name the machine/);
});

test('sno_reconfigure holds only match, issued, expires and sha256, and is a mapping', async () => {
  const { code, report } = await validateVolume({ ...BASE, sno_reconfigure: { match: { serialNumber: 'X1' }, issued: '2026-11-01T09:00:00Z', machine: 'x' } });
  assert.equal(code, 1);
  assert.deepEqual(report.errors.map((e) => e.path), ['sno_reconfigure.machine']);
  assert.match(report.errors[0]!.message, /^is not a field of sno_reconfigure: it holds match, issued, expires and sha256/);
  const wrong = await validateVolume({ ...BASE, sno_reconfigure: 'signed' });
  assert.deepEqual(wrong.report.errors.map((e) => `${e.path}: ${e.message}`), ['sno_reconfigure: expected a mapping, got a string']);
  const typo = await validateVolume({ ...BASE, sno_reconfigure: { match: { serial: 'X1' } } });
  assert.ok(typo.report.errors.some((e) => e.path.startsWith('sno_reconfigure.match')), JSON.stringify(typo.report.errors));
});

test('on the node, signed image-based media for another machine are not taken, and older ones than the last applied are refused', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sno-ibi-bound-'));
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
  const files = signedImageBasedMedia(dir, { 'cluster-configuration/manifest.json': JSON.stringify(BASE), [SOURCES]: MIRRORS }, { issued: '2026-11-01T09:00:00Z' });
  for (const [rel, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fs.writeFile(path.join(dir, rel), text);
  }
  const host = new LocalHost({ root: dir });
  const now = new Date('2026-11-27T09:00:00Z');
  const taken = await loadSiteConfig(dir, { host, now, lastIssued: { issued: '2026-10-01T00:00:00Z' } });
  assert.equal(taken.status, 'valid', JSON.stringify(taken));
  assert.equal(taken.status === 'valid' && taken.site.resolved.issued, '2026-11-01T09:00:00Z', 'the date recorded once applied');
  const replayed = await loadSiteConfig(dir, { host, now, lastIssued: { issued: '2026-11-20T00:00:00Z' } });
  assert.equal(replayed.status, 'invalid');
  assert.deepEqual(replayed.status === 'invalid' && replayed.errors.map((e) => e.path), ['sno_reconfigure.issued']);
  // Issued at the moment of the config applied last: the same config again (a restart resuming it) is taken, another
  // one is not (the fourth hostile re-test of issue 36: a correction signed with the same date let the config it
  // corrected be replayed), and a record older than its digest (written before 2026-11-28) still takes it.
  const digest = taken.status === 'valid' ? taken.site.digest : '';
  assert.equal((await loadSiteConfig(dir, { host, now, lastIssued: { issued: '2026-11-01T09:00:00.000Z', digest } })).status, 'valid');
  assert.equal((await loadSiteConfig(dir, { host, now, lastIssued: { issued: '2026-11-01T09:00:00Z' } })).status, 'valid');
  const sameMoment = await loadSiteConfig(dir, { host, now, lastIssued: { issued: '2026-11-01T09:00:00Z', digest: 'a'.repeat(64) } });
  assert.deepEqual(sameMoment.status === 'invalid' && sameMoment.errors.map((e) => `${e.path}: ${e.message}`), [
    'sno_reconfigure.issued: 2026-11-01T09:00:00Z is also when the config this node applied last was issued, but this is another config: media issued at one moment are one config, so one of the two is not the newest (the office must issue the corrected config with a later metadata.issued)',
  ]);
  await fs.writeFile(path.join(dir, 'sys/class/dmi/id/product_serial'), 'ANOTHER-STORE\n');
  const other = await loadSiteConfig(dir, { host, now });
  assert.equal(other.status, 'not-for-this-machine', JSON.stringify(other));
});
