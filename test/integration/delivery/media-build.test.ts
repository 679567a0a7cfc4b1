// `media build` for a fleet (issue 19), through the shipped bundles: 50 sites from one inventory and template,
// signed, as FAT and ISO images read back with real tools (mdir, blkid, isoinfo) and judged by the node-side
// `validate` with the signing key trusted; byte-identical on a second build; secrets sealed to a node open
// only there; every invalid row is reported in one run naming its row, line and field, with nothing written; a
// missing tool is named with its package. Issue 30: a 50-node fleet from the nodes' rows (as prepare writes them)
// to checked media with the commands docs/fleet.md shows; volume serials from the content; the manifest's digests and keys.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { emitYaml } from '../../../src/util/yaml';
import { nodeInventoryRow } from '../../../src/factory/inventory-row';
import { NODE_KEY_FILE } from '../../../src/paths';
import { generateNodeKeyPair, keyFingerprint } from '../../../src/siteconfig/sealed';
import { loadSiteConfig } from '../../../src/siteconfig/load';
import { trustedKeysFrom } from '../../../src/siteconfig/signature';
import { LocalHost } from '../../../src/host/host';
import { runCli } from '../../../src/cli/cli';
import { ensureDebianPackages } from '../../support/apt';
import { ensureBundle, PROJECT_ROOT } from '../../support/bundle';

const SITES = 50;
const TEMPLATE = `apiVersion: sno-reconfigure.io/v1
kind: SiteConfig
metadata:
  name: \${name}
spec:
  match:
    serialNumber: \${serial}
  baseDomain: \${domain}
  pullSecretFile: pull-secret.json
  network:
    nmstate:
      interfaces:
        - name: eno1
          type: ethernet
          state: up
          ipv4: {enabled: true, dhcp: false, address: [{ip: \${ip}, prefix-length: 24}]}
    verify:
      ping: [\${gateway}]
`;
const PULL_SECRET = JSON.stringify({ auths: { 'registry.example.com:8443': { auth: Buffer.from('fleet:s3cr3t-fleet').toString('base64') } } });

interface Manifest {
  sites: { site: string; row: number; line: number; match: Record<string, string>; siteConfigDigest: string; signedBy: string; sealedFor?: string; images: { file: string; format: string; bytes: number; sha256: string }[] }[];
}

let dir = '';
let bundle = '';
const signing = generateKeyPairSync('ed25519');
const node = generateNodeKeyPair();

function cli(args: string[], env: NodeJS.ProcessEnv = { PATH: process.env.PATH }): { code: number; out: string } {
  const res = spawnSync(process.execPath, [bundle, ...args], { encoding: 'utf8', cwd: dir, env });
  return { code: res.status ?? 1, out: `${res.stdout}${res.stderr}` };
}

function cliAsync(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => execFile(process.execPath, [bundle, ...args], { encoding: 'utf8', cwd: dir }, (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, out: `${stdout}${stderr}` })));
}

/** The node bundle's own command line (src/cli/main.ts calls runCli), run in this process: no Node start per call. */
async function cliInProcess(args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await runCli(args, { out: (t) => (out += t), err: (t) => (out += t), env: { PATH: process.env.PATH }, cwd: dir });
  return { code, out };
}

function writeInventory(file: string, rows: Record<string, string>[]): void {
  writeFileSync(path.join(dir, file), stringify({ sites: rows }));
}

const row = (i: number): Record<string, string> => {
  const n = String(i).padStart(4, '0');
  return { name: `store-${n}`, serial: `SER${n}`, domain: `store${i}.example.com`, ip: `10.${Math.floor(i / 200)}.${i % 200}.10`, gateway: `10.${Math.floor(i / 200)}.${i % 200}.1` };
};

before(() => {
  ensureDebianPackages(['dosfstools', 'mtools', 'xorriso', 'genisoimage']);
  bundle = ensureBundle();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sno-media-build-'));
  mkdirSync(path.join(dir, 'template'));
  writeFileSync(path.join(dir, 'template', 'site-config.yaml'), TEMPLATE);
  writeFileSync(path.join(dir, 'template', 'pull-secret.json'), PULL_SECRET);
  writeFileSync(path.join(dir, 'signing.key.pem'), signing.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(path.join(dir, 'signing.pub.pem'), signing.publicKey.export({ type: 'spki', format: 'pem' }));
  writeFileSync(path.join(dir, 'store-0007.pub.pem'), node.publicKeyPem);
  writeInventory('sites.yaml', Array.from({ length: SITES }, (_, i) => ({ ...row(i + 1), ...(i + 1 === 7 ? { nodePublicKey: 'store-0007.pub.pem' } : {}) })));
});

const build = (out: string, inventory = 'sites.yaml', extra: string[] = []) =>
  cli(['media', 'build', '--inventory', inventory, '--template', 'template/site-config.yaml', '--signing-key', 'signing.key.pem', '--issued', '2026-11-20T09:00:00Z', '--out', out, ...extra]);

describe('media build', () => {
  test(`${SITES} sites: signed FAT and ISO images that real tools read and the node-side validate accepts, each for its machine`, async () => {
    const res = build('out');
    assert.equal(res.code, 0, res.out);
    assert.match(res.out, new RegExp(`${SITES} site\\(s\\), ${SITES * 2} image\\(s\\) in out`));
    assert.doesNotMatch(res.out, /unsigned/);
    const manifest = JSON.parse(readFileSync(path.join(dir, 'out', 'manifest.json'), 'utf8')) as Manifest;
    assert.equal(manifest.sites.length, SITES);
    assert.deepEqual(readdirSync(path.join(dir, 'out')).sort(), ['manifest.json', 'manifest.txt', ...manifest.sites.flatMap((s) => [`${s.site}.fat.img`, `${s.site}.iso`])].sort());
    for (const s of manifest.sites) assert.deepEqual(s.match, { serialNumber: `SER${s.site.slice(-4)}` });

    // Real tools read what was written.
    const fat = path.join(dir, 'out', 'store-0001.fat.img');
    assert.match(execFileSync('blkid', [fat], { encoding: 'utf8' }), /LABEL="SITE-CONFIG".*TYPE="vfat"/);
    const listing = execFileSync('mdir', ['-b', '-i', fat, '::/'], { encoding: 'utf8' });
    assert.deepEqual(listing.split('\n').filter(Boolean).map((l) => l.replace(/^::\//, '')).sort(), ['pull-secret.json', 'site-config.yaml', 'site-config.yaml.sig']);
    const iso = path.join(dir, 'out', 'store-0001.iso');
    assert.match(execFileSync('isoinfo', ['-d', '-i', iso], { encoding: 'utf8' }), /Volume id: SITE-CONFIG/);
    assert.match(execFileSync('blkid', [iso], { encoding: 'utf8' }), /LABEL="SITE-CONFIG".*TYPE="iso9660"/);
    const sealedListing = execFileSync('mdir', ['-b', '-i', path.join(dir, 'out', 'store-0007.fat.img'), '::/'], { encoding: 'utf8' });
    assert.match(sealedListing, /pull-secret\.json\.sealed/);
    assert.doesNotMatch(sealedListing, /pull-secret\.json\n/, 'the clear pull secret is not on a sealed site');
    assert.equal(manifest.sites.find((s) => s.site === 'store-0007')?.sealedFor, node.fingerprint);
    const signedBy = keyFingerprint(signing.publicKey);
    for (const s of manifest.sites) assert.equal(s.signedBy, signedBy);
    assert.deepEqual(manifest.sites.slice(0, 2).map((s) => [s.row, s.line]), [[1, 2], [2, 7]], 'each site with its row and the line of sites.yaml it starts on');

    // The digest the node computes (its report ConfigMap's "digest"), for a plain and a sealed site: the node
    // reads the image with its own key, and its digest is the manifest's.
    for (const site of ['store-0001', 'store-0007']) {
      const r = mkdtempSync(path.join(os.tmpdir(), 'sno-media-digest-'));
      mkdirSync(path.join(r, path.dirname(NODE_KEY_FILE)), { recursive: true });
      writeFileSync(path.join(r, NODE_KEY_FILE), node.privateKeyPem);
      const copy = mkdtempSync(path.join(os.tmpdir(), 'sno-media-copy-'));
      execFileSync('mcopy', ['-s', '-n', '-i', path.join(dir, 'out', `${site}.fat.img`), '::/*', copy]);
      const loaded = await loadSiteConfig(copy, { host: new LocalHost({ root: r }), identity: { serialNumber: `SER${site.slice(-4)}`, macAddresses: [] }, trusted: trustedKeysFrom([{ file: 'signing.pub.pem', pem: signing.publicKey.export({ type: 'spki', format: 'pem' }).toString() }]) });
      assert.equal(loaded.status, 'valid', JSON.stringify(loaded));
      assert.equal(manifest.sites.find((s) => s.site === site)?.siteConfigDigest, loaded.status === 'valid' ? loaded.site.digest : '');
    }

    // The node's own judgement of every image, with the organisation's key trusted (4 at a time): the first
    // two sites' images through the shipped node bundle, the others through the same command line in this
    // process (a Node start per image cost about a third of this file's time and proved nothing more).
    const images = manifest.sites.flatMap((s) => s.images.map((i) => ({ site: s.site, file: i.file })));
    for (let i = 0; i < images.length; i += 4) {
      const validate = (file: string) => (i === 0 ? cliAsync : cliInProcess)(['validate', path.join('out', file), '--trusted-key', 'signing.pub.pem']);
      const results = await Promise.all(images.slice(i, i + 4).map(async (img) => ({ img, r: await validate(img.file) })));
      for (const { img, r } of results) {
        assert.equal(r.code, 0, `${img.file}: ${r.out}`);
        assert.match(r.out, new RegExp(`valid — site "${img.site}", .* for the machine with serial number SER${img.site.slice(-4)}`));
      }
    }
  });

  test('the same inventory, template and key give byte-identical images', () => {
    const again = build('out-again');
    assert.equal(again.code, 0, again.out);
    const first = JSON.parse(readFileSync(path.join(dir, 'out', 'manifest.json'), 'utf8')) as Manifest;
    const second = JSON.parse(readFileSync(path.join(dir, 'out-again', 'manifest.json'), 'utf8')) as Manifest;
    const digests = (m: Manifest) => m.sites.filter((s) => !s.sealedFor).flatMap((s) => s.images.map((i) => `${i.file} ${i.sha256}`));
    assert.deepEqual(digests(second), digests(first));
    assert.equal(digests(first).length, (SITES - 1) * 2);
  });

  test('a sealed site opens only on its node: validate --this-machine with its key, refused with another', () => {
    const image = path.join('out', 'store-0007.fat.img');
    const root = (key: string) => {
      const r = mkdtempSync(path.join(os.tmpdir(), 'sno-media-node-'));
      mkdirSync(path.join(r, path.dirname(NODE_KEY_FILE)), { recursive: true });
      writeFileSync(path.join(r, NODE_KEY_FILE), key);
      mkdirSync(path.join(r, 'sys/class/dmi/id'), { recursive: true });
      writeFileSync(path.join(r, 'sys/class/dmi/id/product_serial'), 'SER0007\n');
      return r;
    };
    const mine = cli(['validate', image, '--this-machine', '--trusted-key', 'signing.pub.pem', '--root', root(node.privateKeyPem)]);
    assert.equal(mine.code, 0, mine.out);
    const theirs = cli(['validate', image, '--this-machine', '--trusted-key', 'signing.pub.pem', '--root', root(generateNodeKeyPair().privateKeyPem)]);
    assert.equal(theirs.code, 1);
    assert.match(theirs.out, /it was made for another node/);
  });

  test('every invalid row is reported in one run, with its row and line; nothing is printed per site and nothing written', () => {
    writeInventory('bad.yaml', [row(1), { ...row(2), domain: 'Not_A_Domain' }, row(3), { ...row(4), nodePublicKey: 'no-such-key.pem' }, { ...row(5), name: 'Store 5' }, { ...row(6), nodePublicKey: 'not a key' }]);
    const res = build('out-bad', 'bad.yaml');
    assert.equal(res.code, 1);
    const lines = res.out.split('\n');
    assert.match(res.out, /4 problems:/);
    assert.ok(lines.some((l) => /^ {2}row 2 \(line 7\), store-0002: the site-config is invalid — spec\.baseDomain: /.test(l)), res.out);
    assert.ok(lines.includes("  row 4 (line 17), store-0004: nodePublicKey 'no-such-key.pem' is neither PEM text (-----BEGIN PUBLIC KEY-----) nor a file beside the inventory: give the key prepare wrote into the node's row, or the path of a file holding it"), res.out);
    assert.ok(lines.some((l) => l.startsWith("  row 5 (line 23), Store 5: name must be a lower-case DNS label")), res.out);
    assert.ok(lines.some((l) => l.startsWith("  row 6 (line 28), store-0006: nodePublicKey 'not a key' is neither PEM text")), res.out);
    assert.doesNotMatch(res.out, /ENOENT/);
    assert.doesNotMatch(res.out, /^store-0001:/m, 'no site is reported as written by a build that fails');
    assert.match(res.out, /Nothing was written/);
    assert.ok(!existsSync(path.join(dir, 'out-bad')));
    assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith('out-bad')), [], 'no partial folder left');
    writeInventory('missing.yaml', [{ name: 'store-0009', serial: 'SER0009' }]);
    assert.match(build('out-missing', 'missing.yaml').out, /row 1 \(line 2\), store-0009: the template needs \$\{domain\}, \$\{ip\}, \$\{gateway\}, which this row does not give/);
  });

  test('nodePublicKey as PEM text (as in the node\'s row) seals like a file', () => {
    writeInventory('pem.yaml', [row(1), { ...row(2), nodePublicKey: node.publicKeyPem }]);
    const res = build('out-pem', 'pem.yaml', ['--format', 'fat']);
    assert.equal(res.code, 0, res.out);
    const manifest = JSON.parse(readFileSync(path.join(dir, 'out-pem', 'manifest.json'), 'utf8')) as Manifest;
    assert.equal(manifest.sites[1]?.sealedFor, node.fingerprint);
    assert.match(execFileSync('mdir', ['-b', '-i', path.join(dir, 'out-pem', 'store-0002.fat.img'), '::/'], { encoding: 'utf8' }), /pull-secret\.json\.sealed/);
  });

  test('the FAT serial and the ISO UUID come from the content: different on two images, the same for the same content', () => {
    const uuid = (out: string, f: string) => execFileSync('blkid', ['-s', 'UUID', '-o', 'value', path.join(dir, out, f)], { encoding: 'utf8' }).trim();
    const fat = [uuid('out', 'store-0001.fat.img'), uuid('out', 'store-0002.fat.img')];
    const iso = [uuid('out', 'store-0001.iso'), uuid('out', 'store-0002.iso')];
    assert.notEqual(fat[0], fat[1]);
    assert.notEqual(iso[0], iso[1]);
    for (const u of fat) assert.match(u, /^[0-9A-F]{4}-[0-9A-F]{4}$/);
    assert.ok(!fat.includes('1234-ABCD') && !iso.includes('2020-01-01-00-00-00-00'), `${fat.join(' ')} ${iso.join(' ')}`);
    execFileSync('fsck.fat', ['-n', path.join(dir, 'out', 'store-0001.fat.img')], { encoding: 'utf8' });
    assert.equal(uuid('out-again', 'store-0001.fat.img'), fat[0], 'the same content gives the same serial');
    assert.equal(uuid('out-again', 'store-0001.iso'), iso[0]);
  });

  test('placeholders: expanded in the nmstate file and manifests, refused in a pull secret, and ${name} picks a file per site', () => {
    const t = path.join(dir, 'tpl-files');
    mkdirSync(path.join(t, 'secrets', 'store-0001'), { recursive: true });
    mkdirSync(path.join(t, 'secrets', 'store-0002'), { recursive: true });
    mkdirSync(path.join(t, 'manifests'), { recursive: true });
    writeFileSync(path.join(t, 'site-config.yaml'), `apiVersion: sno-reconfigure.io/v1
kind: SiteConfig
metadata:
  name: \${name}
spec:
  match:
    serialNumber: \${serial}
  baseDomain: \${domain}
  pullSecretFile: secrets/\${name}/pull-secret.json
  extraManifestFiles: [manifests/]
  network:
    nmstateFile: network.yaml
`);
    writeFileSync(path.join(t, 'network.yaml'), 'interfaces:\n  - name: eno1\n    type: ethernet\n    state: up\n    ipv4: {enabled: true, dhcp: false, address: [{ip: ${ip}, prefix-length: 24}]}\n');
    writeFileSync(path.join(t, 'manifests', 'store.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: store-settings\n  namespace: default\ndata:\n  store: ${name}\n');
    writeFileSync(path.join(t, 'secrets', 'store-0001', 'pull-secret.json'), PULL_SECRET);
    writeFileSync(path.join(t, 'secrets', 'store-0002', 'pull-secret.json'), PULL_SECRET.replace('fleet:', 'other:'));
    writeInventory('two.yaml', [row(1), row(2)]);
    // Extra manifests need signed media (src/siteconfig/trust.ts).
    const res = cli(['media', 'build', '--inventory', 'two.yaml', '--template', 'tpl-files/site-config.yaml', '--signing-key', 'signing.key.pem', '--format', 'fat', '--out', 'out-files']);
    assert.equal(res.code, 0, res.out);
    const network = execFileSync('mtype', ['-i', path.join(dir, 'out-files', 'store-0002.fat.img'), '::/network.yaml'], { encoding: 'utf8' });
    assert.match(network, /ip: 10\.0\.2\.10,/);
    assert.match(execFileSync('mtype', ['-i', path.join(dir, 'out-files', 'store-0002.fat.img'), '::/manifests/store.yaml'], { encoding: 'utf8' }), /store: store-0002/);
    assert.match(execFileSync('mtype', ['-i', path.join(dir, 'out-files', 'store-0002.fat.img'), '::/secrets/store-0002/pull-secret.json'], { encoding: 'utf8' }), /auths/);
    writeFileSync(path.join(t, 'secrets', 'store-0002', 'pull-secret.json'), '{"auths":{"r.example.com":{"auth":"${token}"}}}');
    const refused = cli(['media', 'build', '--inventory', 'two.yaml', '--template', 'tpl-files/site-config.yaml', '--signing-key', 'signing.key.pem', '--format', 'fat', '--out', 'out-files2']);
    assert.equal(refused.code, 1);
    assert.match(refused.out, /row 2 \(line 7\), store-0002: pullSecretFile 'secrets\/store-0002\/pull-secret\.json' holds \$\{token\}: placeholders are expanded only in the template, its nmstateFile and its extraManifestFiles/);
  });

  test('an unsigned build says so; its manifest records "unsigned"', () => {
    writeInventory('one.yaml', [row(1)]);
    const res = cli(['media', 'build', '--inventory', 'one.yaml', '--template', 'template/site-config.yaml', '--format', 'iso', '--out', 'out-unsigned']);
    assert.equal(res.code, 0, res.out);
    assert.match(res.out, /warning: these media are unsigned \(no --signing-key\)/);
    assert.equal((JSON.parse(readFileSync(path.join(dir, 'out-unsigned', 'manifest.json'), 'utf8')) as Manifest).sites[0]?.signedBy, 'unsigned');
  });

  test('--multi-node: one volume with every site-config under site-configs/, and each node picks its own', async () => {
    const res = build('out-multi', 'sites.yaml', ['--multi-node']);
    assert.equal(res.code, 0, res.out);
    assert.match(res.out, new RegExp(`${SITES} site\\(s\\), 2 image\\(s\\) in out-multi`), 'the images it wrote: two, not two per site');
    assert.deepEqual(readdirSync(path.join(dir, 'out-multi')).sort(), ['manifest.json', 'manifest.txt', 'sites.fat.img', 'sites.iso']);
    const listing = execFileSync('mdir', ['-b', '-i', path.join(dir, 'out-multi', 'sites.fat.img'), '::/site-configs'], { encoding: 'utf8' }).split('\n').filter(Boolean);
    assert.equal(listing.filter((l) => l.endsWith('.yaml')).length, SITES);
    assert.equal(listing.filter((l) => l.endsWith('.yaml.sig')).length, SITES);
    // Each image read by the node bundle twice (every site-config, then this machine's), the four at once.
    const r = mkdtempSync(path.join(os.tmpdir(), 'sno-media-multi-'));
    mkdirSync(path.join(r, 'sys/class/dmi/id'), { recursive: true });
    writeFileSync(path.join(r, 'sys/class/dmi/id/product_serial'), 'SER0033\n');
    const checks = await Promise.all(
      ['sites.fat.img', 'sites.iso'].map(async (image) => {
        const [all, mine] = await Promise.all([
          cliAsync(['media', 'check', path.join('out-multi', image), '--trusted-key', 'signing.pub.pem']),
          cliAsync(['validate', path.join('out-multi', image), '--this-machine', '--trusted-key', 'signing.pub.pem', '--root', r]),
        ]);
        return { all, mine };
      }),
    );
    for (const { all, mine } of checks) {
      assert.equal(all.code, 0, all.out);
      assert.equal(mine.code, 0, mine.out);
      assert.match(mine.out, /site-configs\/store-0033\.yaml/);
    }
  });

  test('plan reads an image as validate does', () => {
    const r = mkdtempSync(path.join(os.tmpdir(), 'sno-media-plan-'));
    mkdirSync(path.join(r, 'sys/class/dmi/id'), { recursive: true });
    writeFileSync(path.join(r, 'sys/class/dmi/id/product_serial'), 'SER0001\n');
    for (const image of ['store-0001.fat.img', 'store-0001.iso']) {
      const res = cli(['plan', path.join('out', image), '--root', r]);
      assert.equal(res.code, 0, res.out);
      assert.match(res.out, /^Plan for site-config "store-0001" .* nothing is changed\.$/m);
      assert.match(res.out, /Apply the site network \[network\]/);
    }
  });

  test('a good signature says so, with its key, also in --json; without a key: "no trusted key given"', () => {
    const image = path.join('out', 'store-0001.iso');
    const signedBy = keyFingerprint(signing.publicKey);
    const text = cli(['media', 'check', image, '--trusted-key', 'signing.pub.pem']);
    assert.equal(text.code, 0, text.out);
    assert.match(text.out, new RegExp(`^notes:\\n {2}\\S*site-config\\.yaml\\.sig: signature verified with key ${signedBy.replace(/[+/]/g, '\\$&')} \\(signing\\.pub\\.pem\\)$`, 'm'));
    const json = JSON.parse(cli(['validate', image, '--trusted-key', 'signing.pub.pem', '--json']).out) as { notes?: { message: string }[]; warnings: unknown[] };
    assert.ok(json.notes?.some((n) => n.message.startsWith(`signature verified with key ${signedBy}`)), JSON.stringify(json));
    const noKey = cli(['validate', image]);
    assert.match(noKey.out, /site-config\.yaml\.sig: not verified: no trusted key given \(--trusted-key\), so the file is judged as signed media; a node takes what only signed media may carry only when the signature verifies with a key it trusts/);
    assert.doesNotMatch(noKey.out, /this node holds no trusted keys/);
  });

  test('media check reads the stick itself: a block device holding a built image', () => {
    const device = execFileSync('losetup', ['--find', '--show', '--read-only', path.join(dir, 'out', 'store-0003.fat.img')], { encoding: 'utf8' }).trim();
    try {
      const res = cli(['media', 'check', device, '--trusted-key', 'signing.pub.pem']);
      assert.equal(res.code, 0, res.out);
      assert.match(res.out, new RegExp(`^${device}:site-config\\.yaml: valid — site "store-0003", .* for the machine with serial number SER0003`, 'm'));
    } finally {
      execFileSync('losetup', ['-d', device]);
    }
  });

  test('the docs/fleet.md example (examples/fleet) builds as shown, joined to its nodes\' rows, and checks clean', () => {
    const fleet = path.join(PROJECT_ROOT, 'examples', 'fleet');
    const res = cli(['media', 'build', '--inventory', path.join(fleet, 'sites.csv'), '--nodes', path.join(fleet, 'nodes.yaml'), '--template', path.join(fleet, 'template', 'site-config.yaml'), '--signing-key', path.join(PROJECT_ROOT, 'examples', 'signing-key', 'EXAMPLE-site-signing.key.pem'), '--out', 'out-example']);
    assert.equal(res.code, 0, res.out);
    assert.match(readFileSync(path.join(dir, 'out-example', 'manifest.txt'), 'utf8'), /^store-0042\tstore-0042\.fat\.img\t\d+\t[0-9a-f]{64}\tserialNumber=CZ2042XYZ \(secrets sealed for SHA256:\S+\)\tSHA256:\S+\t[0-9a-f]{64}$/m);
    const check = cli(['media', 'check', '--manifest', path.join('out-example', 'manifest.json'), '--trusted-key', path.join(PROJECT_ROOT, 'examples', 'signing-key', 'EXAMPLE-site-signing.pub.pem')]);
    assert.equal(check.code, 0, check.out);
    assert.match(check.out, /^4 of 4 image\(s\) good$/m);
  });

  test('a site-config that renames its node is refused: the node\'s cluster and host names win', () => {
    const fleet = path.join(PROJECT_ROOT, 'examples', 'fleet');
    const t = path.join(dir, 'tpl-rename');
    cpSync(path.join(fleet, 'template'), t, { recursive: true });
    writeFileSync(path.join(t, 'site-config.yaml'), readFileSync(path.join(t, 'site-config.yaml'), 'utf8').replace('clusterName: ${clusterName}', 'clusterName: sno'));
    const res = cli(['media', 'build', '--inventory', path.join(fleet, 'sites.csv'), '--nodes', path.join(fleet, 'nodes.yaml'), '--template', path.join(t, 'site-config.yaml'), '--out', 'out-rename']);
    assert.equal(res.code, 1);
    assert.match(res.out, /row 1 \(line 2\), store-0041: spec\.clusterName is sno, but the node was installed with clusterName sno1, which cannot change/);
    assert.match(res.out, /row 2 \(line 3\), store-0042: spec\.clusterName is sno/);
  });

  test(`a ${SITES}-node fleet: from the rows prepare wrote on each node to checked media, with the commands docs/fleet.md shows`, async () => {
    // The block of docs/fleet.md "Media for many sites", run as written with sno-reconfigure being this build.
    const doc = readFileSync(path.join(PROJECT_ROOT, 'docs', 'fleet.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Media for many sites'));
    const commands = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
    assert.ok(commands?.includes('media check --manifest'), 'docs/fleet.md shows the fleet commands');
    const fleet = mkdtempSync(path.join(os.tmpdir(), 'sno-fleet-'));
    mkdirSync(path.join(fleet, 'nodes'));
    cpSync(path.join(PROJECT_ROOT, 'examples', 'fleet', 'template'), path.join(fleet, 'template'), { recursive: true });
    writeFileSync(path.join(fleet, 'site-signing.key.pem'), signing.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    writeFileSync(path.join(fleet, 'site-signing.pub.pem'), signing.publicKey.export({ type: 'spki', format: 'pem' }));
    // Each node's row, made by the code prepare runs (src/factory/inventory-row.ts) over that node's identity,
    // and written as prepare writes it: a YAML list of one row.
    const sites = ['name,serial,domain,ip,gateway'];
    for (let i = 1; i <= SITES; i++) {
      const n = String(i).padStart(4, '0');
      const r = row(i);
      sites.push(`store-${n},SER${n},${r.domain!},${r.ip!},${r.gateway!}`);
      mkdirSync(path.join(fleet, 'template', 'secrets', `store-${n}`), { recursive: true });
      writeFileSync(path.join(fleet, 'template', 'secrets', `store-${n}`, 'pull-secret.json'), PULL_SECRET);
    }
    writeFileSync(path.join(fleet, 'sites.csv'), `${sites.join('\n')}\n`);
    for (let i = 1; i <= SITES; i++) {
      const n = String(i).padStart(4, '0');
      const root = mkdtempSync(path.join(os.tmpdir(), 'sno-fleet-node-'));
      mkdirSync(path.join(root, 'sys/class/dmi/id'), { recursive: true });
      writeFileSync(path.join(root, 'sys/class/dmi/id/product_serial'), `SER${n}\n`);
      const key = i % 2 === 0 ? generateNodeKeyPair() : node;
      const nodeRow = await nodeInventoryRow(new LocalHost({ root }), { clusterName: 'sno1', hostname: 'sno1-node', installedDomain: 'factory.example.com', openshiftVersion: '4.14.12', nodePublicKey: key.publicKeyPem, nodeKeyFingerprint: key.fingerprint, shipBy: '2026-12-20T09:14:03.000Z' });
      writeFileSync(path.join(fleet, 'nodes', `SER${n}.yaml`), emitYaml([nodeRow]));
    }
    const res = spawnSync('bash', ['-ec', `sno-reconfigure() { "${process.execPath}" "${bundle}" "$@"; }\n${commands!}`], { cwd: fleet, encoding: 'utf8' });
    assert.equal(res.status, 0, `${res.stdout}${res.stderr}`);
    const lines = res.stdout.split('\n');
    assert.equal(lines.filter((l) => /^store-\d{4}\.(fat\.img|iso): ok — sha256 as in the manifest, site "store-\d{4}", signature verified with key SHA256:\S+ \(for serialNumber \S+, issued \S+Z, expires \S+Z\); secrets sealed for node key SHA256:\S+$/.test(l)).length, SITES * 2, res.stdout);
    assert.ok(lines.includes(`${SITES * 2} of ${SITES * 2} image(s) good`), res.stdout);
    const manifest = JSON.parse(readFileSync(path.join(fleet, 'media', 'manifest.json'), 'utf8')) as Manifest;
    assert.equal(manifest.sites.length, SITES);
    assert.equal(manifest.sites.filter((s) => s.sealedFor === node.fingerprint).length, SITES / 2);

    // One image changed after the build: the check says which, and fails.
    const victim = path.join(fleet, 'media', 'store-0010.iso');
    writeFileSync(victim, Buffer.concat([readFileSync(victim), Buffer.from('x')]));
    const again = cli(['media', 'check', '--manifest', path.join(fleet, 'media', 'manifest.json'), '--trusted-key', path.join(fleet, 'site-signing.pub.pem'), '--json']);
    assert.equal(again.code, 1);
    const report = JSON.parse(again.out) as { valid: boolean; images: { file: string; ok: boolean; signature?: string; problems: string[] }[] };
    assert.equal(report.valid, false);
    assert.deepEqual(report.images.filter((i) => !i.ok).map((i) => i.file), ['store-0010.iso']);
    assert.match(report.images.find((i) => !i.ok)?.problems[0] ?? '', /the manifest says [0-9a-f]{64}: the image was changed or damaged after the build/);
    assert.match(report.images[0]?.signature ?? '', /^verified with key SHA256:/);
  });

  test('a missing tool is named with its package', () => {
    const bin = mkdtempSync(path.join(os.tmpdir(), 'sno-media-bin-'));
    for (const tool of ['sh', 'mkfs.fat', 'mcopy', 'touch']) {
      const found = execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
      symlinkSync(found, path.join(bin, tool));
    }
    writeInventory('notool.yaml', [row(1)]);
    const res = build('out-notool', 'notool.yaml', ['--format', 'iso']);
    assert.equal(res.code, 0, 'with the tools present it builds');
    const without = cli(['media', 'build', '--inventory', 'sites.yaml', '--template', 'template/site-config.yaml', '--out', 'out-notool2', '--format', 'iso'], { PATH: bin });
    assert.equal(without.code, 1);
    assert.match(without.out, /xorriso is not installed; install the xorriso package/);
  });
});
