// The recipes of docs/factory-and-site.md, run as written: key generation, render with the internal IP and the
// trusted key, pin then sign (Ed25519 and ECDSA P-256), the office check with the public key under --root, a
// multi-node stick signed file by file, a FAT image (mkfs.vfat + mcopy) and ISO images (xorriso, genisoimage)
// whose labels blkid/mlabel read back and whose contents, read back, the bundled CLI accepts. Each command is
// asserted to appear verbatim in the document, so the document cannot keep a recipe the test no longer runs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureDebianPackages } from '../support/apt';
import { ensureBundle, PROJECT_ROOT } from '../support/bundle';

const DOC = readFileSync(path.join(PROJECT_ROOT, 'docs', 'factory-and-site.md'), 'utf8');
const EXAMPLES = path.join(PROJECT_ROOT, 'examples');

let work = '';
let env: NodeJS.ProcessEnv = {};

/** Runs a command of the document (it must appear there verbatim) in the work directory; fails on a non-zero exit. */
function documented(command: string): string {
  assert.ok(DOC.includes(command), `docs/factory-and-site.md shows the command: ${command}`);
  return shell(command);
}

function shell(command: string): string {
  try {
    return execFileSync('bash', ['-c', command], { cwd: work, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10 * 60_000 });
  } catch (e) {
    const err = e as { status?: number; stdout?: string; stderr?: string };
    throw new Error(`\`${command}\` exited ${String(err.status)}:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
  }
}

/** A command expected to fail: its exit status and output. */
function failing(command: string): { status: number; output: string } {
  try {
    execFileSync('bash', ['-c', command], { cwd: work, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const err = e as { status: number; stdout?: string; stderr?: string };
    return { status: err.status, output: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
  throw new Error(`\`${command}\` succeeded, but was expected to fail`);
}

function assertValid(output: string): void {
  assert.match(output, /: valid/);
  assert.doesNotMatch(output, /warning|INVALID/);
}

before(async () => {
  ensureDebianPackages(['dosfstools', 'mtools', 'xorriso', 'genisoimage']);
  const bundle = ensureBundle();
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'sno-factory-and-site-'));
  // `sno-reconfigure` as the document writes it: the bundled CLI.
  const bin = path.join(work, '.bin');
  await fs.mkdir(bin);
  await fs.writeFile(path.join(bin, 'sno-reconfigure'), `#!/bin/sh\nexec "${process.execPath}" "${bundle}" "$@"\n`, { mode: 0o755 });
  env = { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}:/usr/sbin:/sbin`, HOME: work, LC_ALL: 'C' };
  // The site's folder as written, before pinning and signing: the signed example without its pins and signature.
  await fs.cp(path.join(EXAMPLES, 'signed-vlan-store'), path.join(work, 'store-0150'), { recursive: true });
  await fs.rm(path.join(work, 'store-0150', 'site-config.yaml.sig'));
  const text = await fs.readFile(path.join(work, 'store-0150', 'site-config.yaml'), 'utf8');
  await fs.writeFile(path.join(work, 'store-0150', 'site-config.yaml'), text.slice(0, text.indexOf('  sha256:')));
});
after(async () => {
  await fs.rm(work, { recursive: true, force: true });
});

test('the key pair, and the MachineConfig that installs its public key with the internal IP', async () => {
  documented('openssl genpkey -algorithm ed25519 -out site-signing.key.pem');
  documented('openssl pkey -in site-signing.key.pem -pubout -out site-signing.pub.pem');
  assert.match(await fs.readFile(path.join(work, 'site-signing.pub.pem'), 'utf8'), /^-----BEGIN PUBLIC KEY-----\n/);
  documented('sno-reconfigure render machineconfig --node-image registry.store0042.example.com/ubi9/nodejs-24-minimal@sha256:4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f --internal-ip 192.168.127.10/24 --trusted-key site-signing.pub.pem > mc.yaml');
  const mc = await fs.readFile(path.join(work, 'mc.yaml'), 'utf8');
  assert.match(mc, /path: \/etc\/sno-reconfigure\/trusted-keys\/site-signing\.pem\n/);
  assert.match(mc, /path: \/etc\/NetworkManager\/dispatcher\.d\/pre-up\.d\/30-sno-reconfigure-internal-ip\n/);
  assert.match(mc, /path: \/etc\/default\/nodeip-configuration\n/);
  assert.doesNotMatch(mc, /PRIVATE KEY/);
});

test('pin, then sign last, then the office check verifies the signature as a node would', async () => {
  // Before it is signed it is judged as unsigned media: only the fields that need the signature are errors.
  const before = failing('sno-reconfigure validate store-0150');
  assert.match(before.output, /spec\.additionalTrustBundleFile: needs signed media/);
  assert.doesNotMatch(before.output.replace(/.*needs signed media.*\n/g, ''), /^\s+\S+: /m);
  const unsigned = failing('sno-reconfigure validate store-0150 --trusted-key site-signing.pub.pem');
  assert.equal(unsigned.status, 1);
  assert.match(unsigned.output, /site-config\.yaml\.sig: this node holds trusted keys, so the site-config must be signed/);

  const sums = documented('(cd store-0150 && sha256sum network.yaml pull-secret.json registry-ca.crt)');
  assert.equal(sums.trim().split('\n').length, 3);
  documented(`(cd store-0150 && sha256sum network.yaml pull-secret.json registry-ca.crt | awk 'BEGIN { print "  sha256:" } { print "    " $2 ": " $1 }' >> site-config.yaml)`);
  documented('openssl pkeyutl -sign -rawin -inkey site-signing.key.pem -in store-0150/site-config.yaml | base64 -w0 > store-0150/site-config.yaml.sig');
  assertValid(documented('sno-reconfigure validate store-0150 --trusted-key site-signing.pub.pem'));

  // What the committed example holds is what these commands made.
  assert.equal(await fs.readFile(path.join(work, 'store-0150', 'site-config.yaml'), 'utf8'), await fs.readFile(path.join(EXAMPLES, 'signed-vlan-store', 'site-config.yaml'), 'utf8'));

  // Sign last: an edit after signing is refused.
  await fs.copyFile(path.join(work, 'store-0150', 'site-config.yaml'), path.join(work, 'site-config.yaml.signed'));
  await fs.appendFile(path.join(work, 'store-0150', 'site-config.yaml'), '# a late edit\n');
  const stale = failing('sno-reconfigure validate store-0150 --trusted-key site-signing.pub.pem');
  assert.match(stale.output, /site-config\.yaml\.sig: does not verify/);
  await fs.copyFile(path.join(work, 'site-config.yaml.signed'), path.join(work, 'store-0150', 'site-config.yaml'));
});

test('an ECDSA P-256 key signs the same way', () => {
  documented('openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out site-signing-p256.key.pem');
  documented('openssl pkey -in site-signing-p256.key.pem -pubout -out site-signing-p256.pub.pem');
  shell('cp store-0150/site-config.yaml.sig ed25519.sig');
  documented('openssl dgst -sha256 -sign site-signing-p256.key.pem store-0150/site-config.yaml | base64 -w0 > store-0150/site-config.yaml.sig');
  const untrusted = failing('sno-reconfigure validate store-0150 --trusted-key site-signing.pub.pem');
  assert.match(untrusted.output, /site-config\.yaml\.sig: does not verify site-config\.yaml with any of the node's 1 trusted key/);
  assertValid(shell('sno-reconfigure validate store-0150 --trusted-key site-signing.pub.pem --trusted-key site-signing-p256.pub.pem'));
  shell('cp ed25519.sig store-0150/site-config.yaml.sig');
});

test('a multi-node stick: every file pinned and signed on its own', async () => {
  await fs.cp(path.join(EXAMPLES, 'multi-node-stick'), path.join(work, 'batch'), { recursive: true });
  // Signed means bound: each file names its machine (spec.match) and gets its issue date before it is signed.
  for (const name of await fs.readdir(path.join(work, 'batch', 'site-configs'))) {
    const file = path.join(work, 'batch', 'site-configs', name);
    await fs.writeFile(file, (await fs.readFile(file, 'utf8')).replace(/^( {2}name: .*)$/m, '$1\n  issued: 2026-11-20T09:00:00Z'));
  }
  documented('for f in batch/site-configs/*.yaml; do openssl pkeyutl -sign -rawin -inkey site-signing.key.pem -in "$f" | base64 -w0 > "$f.sig"; done');
  const report = documented('sno-reconfigure validate batch --trusted-key site-signing.pub.pem');
  assert.match(report, /all 3 site-configs valid/);
  assert.doesNotMatch(report, /warning/);
});

test('a FAT image labelled SITE-CONFIG: label, contents, read back and valid', () => {
  documented('mkfs.vfat -C -n SITE-CONFIG site-config.img 8192');
  documented('mcopy -s -i site-config.img store-0150/* ::/');
  assert.match(documented('mlabel -s -i site-config.img ::'), /Volume label is SITE-CONFIG\s*$/);
  const blkid = documented('blkid -p site-config.img');
  assert.match(blkid, / LABEL="SITE-CONFIG" /);
  assert.match(blkid, / TYPE="vfat" /);
  assert.match(documented('mdir -/ -i site-config.img ::'), /site-config\.yaml\.sig/);
  const fromImage = documented('sno-reconfigure validate site-config.img --trusted-key site-signing.pub.pem');
  assertValid(fromImage);
  assert.match(fromImage, /^site-config\.img:site-config\.yaml: valid/m, 'messages name the image, not a temporary copy');
  documented("mkdir readback && mcopy -s -n -i site-config.img '::/*' readback/");
  assertValid(documented('sno-reconfigure validate readback --trusted-key site-signing.pub.pem'));
  // The stick itself cannot be written here: the same dd, to a file, gives the same volume.
  assert.ok(DOC.includes('dd if=site-config.img of=/dev/sdX bs=4M conv=fsync'));
  shell('dd if=site-config.img of=stick.img bs=4M conv=fsync');
  assert.match(shell('blkid -p stick.img'), / LABEL="SITE-CONFIG" /);
  // FAT labels hold 11 characters: the longer labels the agent accepts do not fit (the document says so).
  assert.match(failing('mkfs.vfat -C -n RELOCATION-CONFIG long-label.img 8192').output, /no longer than 11 characters/);
});

for (const tool of ['xorriso', 'genisoimage']) {
  test(`an ISO image made with ${tool}: label, file names, read back and valid`, () => {
    shell('rm -rf site-config.iso readback-iso');
    documented(tool === 'xorriso' ? 'xorriso -as mkisofs -V SITE-CONFIG -J -R -o site-config.iso store-0150/' : 'genisoimage -V SITE-CONFIG -J -R -o site-config.iso store-0150/');
    const blkid = documented('blkid -p site-config.iso');
    assert.match(blkid, / LABEL="SITE-CONFIG" /);
    assert.match(blkid, / TYPE="iso9660" /);
    assertValid(documented('sno-reconfigure validate site-config.iso --trusted-key site-signing.pub.pem'));
    documented('xorriso -osirrox on -indev site-config.iso -extract / readback-iso');
    assertValid(documented('sno-reconfigure validate readback-iso --trusted-key site-signing.pub.pem'));
  });
}
