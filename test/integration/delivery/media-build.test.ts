// `media build` for a fleet (issue 19), through the shipped bundles: 50 sites from one inventory and template,
// signed, as FAT and ISO images read back with real tools (mdir, blkid, isoinfo) and judged by the node-side
// `validate` with the signing key trusted; byte-identical on a second build; secrets sealed to a node open
// only there; an invalid row stops the build naming the row and the field, with nothing written; a missing
// tool is named with its package.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { NODE_KEY_FILE } from '../../../src/paths';
import { generateNodeKeyPair } from '../../../src/siteconfig/sealed';
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
  sites: { site: string; row: number; match: Record<string, string>; sealedFor?: string; images: { file: string; format: string; bytes: number; sha256: string }[] }[];
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
  cli(['media', 'build', '--inventory', inventory, '--template', 'template/site-config.yaml', '--signing-key', 'signing.key.pem', '--out', out, ...extra]);

describe('media build', () => {
  test(`${SITES} sites: signed FAT and ISO images that real tools read and the node-side validate accepts, each for its machine`, async () => {
    const res = build('out');
    assert.equal(res.code, 0, res.out);
    assert.match(res.out, new RegExp(`${SITES} site\\(s\\), ${SITES * 2} image\\(s\\) in out`));
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

    // The node's own judgement of every image, with the organisation's key trusted (4 at a time).
    const images = manifest.sites.flatMap((s) => s.images.map((i) => ({ site: s.site, file: i.file })));
    for (let i = 0; i < images.length; i += 4) {
      const results = await Promise.all(images.slice(i, i + 4).map(async (img) => ({ img, r: await cliAsync(['validate', path.join('out', img.file), '--trusted-key', 'signing.pub.pem']) })));
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

  test('an invalid row stops the build naming the row and the field; nothing is written', () => {
    writeInventory('bad.yaml', [row(1), { ...row(2), domain: 'Not_A_Domain' }, row(3)]);
    const res = build('out-bad', 'bad.yaml');
    assert.equal(res.code, 1);
    assert.match(res.out, /row 2 \(store-0002\): the site-config is invalid — spec\.baseDomain: /);
    assert.match(res.out, /nothing was written/);
    assert.ok(!existsSync(path.join(dir, 'out-bad')));
    assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith('out-bad')), [], 'no partial folder left');
    writeInventory('missing.yaml', [{ name: 'store-0009', serial: 'SER0009' }]);
    assert.match(build('out-missing', 'missing.yaml').out, /row 1 \(store-0009\): the template needs \$\{domain\}, \$\{ip\}, \$\{gateway\}, which this row does not give/);
  });

  test('--multi-node: one volume with every site-config under site-configs/, and each node picks its own', () => {
    const res = build('out-multi', 'sites.yaml', ['--multi-node']);
    assert.equal(res.code, 0, res.out);
    assert.deepEqual(readdirSync(path.join(dir, 'out-multi')).sort(), ['manifest.json', 'manifest.txt', 'sites.fat.img', 'sites.iso']);
    const listing = execFileSync('mdir', ['-b', '-i', path.join(dir, 'out-multi', 'sites.fat.img'), '::/site-configs'], { encoding: 'utf8' }).split('\n').filter(Boolean);
    assert.equal(listing.filter((l) => l.endsWith('.yaml')).length, SITES);
    assert.equal(listing.filter((l) => l.endsWith('.yaml.sig')).length, SITES);
    for (const image of ['sites.fat.img', 'sites.iso']) {
      const all = cli(['media', 'check', path.join('out-multi', image), '--trusted-key', 'signing.pub.pem']);
      assert.equal(all.code, 0, all.out);
      const r = mkdtempSync(path.join(os.tmpdir(), 'sno-media-multi-'));
      mkdirSync(path.join(r, 'sys/class/dmi/id'), { recursive: true });
      writeFileSync(path.join(r, 'sys/class/dmi/id/product_serial'), 'SER0033\n');
      const mine = cli(['validate', path.join('out-multi', image), '--this-machine', '--trusted-key', 'signing.pub.pem', '--root', r]);
      assert.equal(mine.code, 0, mine.out);
      assert.match(mine.out, /site-configs\/store-0033\.yaml/);
    }
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

  test('the README example (examples/fleet) builds as shown', () => {
    const fleet = path.join(PROJECT_ROOT, 'examples', 'fleet');
    const res = cli(['media', 'build', '--inventory', path.join(fleet, 'sites.csv'), '--template', path.join(fleet, 'template', 'site-config.yaml'), '--signing-key', path.join(PROJECT_ROOT, 'examples', 'signing-key', 'EXAMPLE-site-signing.key.pem'), '--out', 'out-example']);
    assert.equal(res.code, 0, res.out);
    assert.match(readFileSync(path.join(dir, 'out-example', 'manifest.txt'), 'utf8'), /^store-0042\tstore-0042\.fat\.img\t\d+\t[0-9a-f]{64}\tserialNumber=CZ2042XYZ$/m);
  });

  test('a missing tool is named with its package', () => {
    const bin = mkdtempSync(path.join(os.tmpdir(), 'sno-media-bin-'));
    for (const tool of ['sh', 'mkfs.fat', 'mcopy', 'touch']) {
      const found = execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
      symlinkSync(found, path.join(bin, tool));
    }
    const res = build('out-notool', 'sites.yaml', ['--format', 'iso']);
    assert.equal(res.code, 0, 'with the tools present it builds');
    const without = cli(['media', 'build', '--inventory', 'sites.yaml', '--template', 'template/site-config.yaml', '--out', 'out-notool2', '--format', 'iso'], { PATH: bin });
    assert.equal(without.code, 1);
    assert.match(without.out, /xorriso is not installed; install the xorriso package/);
  });
});
