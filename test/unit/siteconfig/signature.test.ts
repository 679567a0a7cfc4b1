import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { decodeSignature, loadTrustedKeys, mediaTrustLine, parseTrustedKey, readMediaTrust, trustedKeysFrom, verifyWithTrustedKeys } from '../../../src/siteconfig/signature';
import { TRUSTED_KEYS_DIR, UNSIGNED_MEDIA_FILE } from '../../../src/paths';
import { CORPUS_DIR } from './corpus';

const data = Buffer.from('apiVersion: sno-reconfigure.io/v1\nkind: SiteConfig\n');
const ed = generateKeyPairSync('ed25519');
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const pem = (k: { publicKey: import('node:crypto').KeyObject }) => k.publicKey.export({ type: 'spki', format: 'pem' }).toString();

const tmpDirs: string[] = [];
after(async () => {
  for (const d of tmpDirs) await fs.rm(d, { recursive: true, force: true });
});

test('Ed25519 and ECDSA P-256 (DER and IEEE-P1363) signatures verify; others do not', () => {
  const keys = [
    { file: 'ed.pem', ...(parseTrustedKey(pem(ed)) as Exclude<ReturnType<typeof parseTrustedKey>, string>) },
    { file: 'ec.pem', ...(parseTrustedKey(pem(ec)) as Exclude<ReturnType<typeof parseTrustedKey>, string>) },
  ];
  assert.equal(keys[0]!.kind, 'ed25519');
  assert.equal(keys[1]!.kind, 'ecdsa-p256');
  assert.equal(verifyWithTrustedKeys(data, sign(null, data, ed.privateKey), keys)?.file, 'ed.pem');
  const der = sign('sha256', data, { key: ec.privateKey, dsaEncoding: 'der' });
  const p1363 = sign('sha256', data, { key: ec.privateKey, dsaEncoding: 'ieee-p1363' });
  assert.equal(der[0], 0x30);
  assert.equal(p1363.length, 64);
  assert.equal(verifyWithTrustedKeys(data, der, keys)?.file, 'ec.pem');
  assert.equal(verifyWithTrustedKeys(data, p1363, keys)?.file, 'ec.pem');
  const other = generateKeyPairSync('ed25519');
  assert.equal(verifyWithTrustedKeys(data, sign(null, data, other.privateKey), keys), undefined);
  assert.equal(verifyWithTrustedKeys(Buffer.concat([data, Buffer.from('x')]), der, keys), undefined);
  assert.equal(verifyWithTrustedKeys(data, Buffer.from('garbage'), keys), undefined);
});

test('trusted key files: certificates carry a key, private keys and other algorithms are refused', () => {
  assert.equal((parseTrustedKey(readFileSync(path.join(CORPUS_DIR, '_pki', 'ca.crt'), 'utf8')) as { kind: string }).kind, 'ecdsa-p256');
  assert.match(parseTrustedKey(ed.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()) as string, /is a private key/);
  const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
  assert.match(parseTrustedKey(pem(p384)) as string, /unsupported key \(EC secp384r1\)/);
  assert.match(parseTrustedKey('hello') as string, /holds no PEM public key/);
});

test('signature text must be base64', () => {
  assert.ok(Buffer.isBuffer(decodeSignature('c2ln\nbmF0dXJl\n')));
  assert.equal(decodeSignature('  '), 'is empty');
  assert.match(decodeSignature('%%%') as string, /not a base64/);
});

test('loadTrustedKeys reads *.pem under the host root; any .pem makes signatures required', async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'sno-keys-'));
  tmpDirs.push(root);
  const host = new LocalHost({ root });
  assert.deepEqual(await loadTrustedKeys(host), { required: false, keys: [], problems: [] });
  const dir = path.join(root, 'etc/sno-reconfigure/trusted-keys');
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'README'), 'not a key');
  assert.equal((await loadTrustedKeys(host)).required, false);
  await fs.writeFile(path.join(dir, 'broken.pem'), 'garbage');
  const broken = await loadTrustedKeys(host);
  assert.equal(broken.required, true);
  assert.equal(broken.keys.length, 0);
  assert.equal(broken.problems[0]!.path, '/etc/sno-reconfigure/trusted-keys/broken.pem');
  await fs.writeFile(path.join(dir, 'factory.pem'), pem(ed));
  const good = await loadTrustedKeys(host);
  assert.deepEqual(good.keys.map((k) => k.file), ['/etc/sno-reconfigure/trusted-keys/factory.pem']);
});

// Issue 41, `npm run mutation -- siteconfig-signature` (2026-11-27: 55.8 %): the branches no test reached.

test('what the node accepts, in one sentence: signed with its keys, unsigned by choice or by default, and a key folder that cannot be listed counts as holding keys', async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'sno-trust-'));
  tmpDirs.push(root);
  const host = new LocalHost({ root });
  const unchosen = await readMediaTrust(host);
  assert.deepEqual(unchosen, { signed: false, chosen: false });
  assert.equal(mediaTrustLine(unchosen), 'unsigned media are accepted though the factory never chose --allow-unsigned-media (no trusted keys on this node); they may carry only the network, names, pull secret, digest mirrors, NTP and timeouts (anything else needs signed media)');
  await fs.mkdir(path.join(root, path.dirname(UNSIGNED_MEDIA_FILE)), { recursive: true });
  await fs.writeFile(path.join(root, UNSIGNED_MEDIA_FILE), '');
  assert.match(mediaTrustLine(await readMediaTrust(host)), /^unsigned media are accepted \(the factory chose --allow-unsigned-media\); they may carry only/);
  const dir = path.join(root, TRUSTED_KEYS_DIR);
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'notes.txt'), 'not a key');
  assert.equal((await readMediaTrust(host)).signed, false, 'only *.pem files are keys');
  await fs.writeFile(path.join(dir, 'factory.pem'), pem(ed));
  const signed = await readMediaTrust(host);
  assert.deepEqual(signed, { signed: true, keyFiles: ['factory.pem'] });
  assert.equal(mediaTrustLine(signed), `media must be signed by one of this node's trusted keys (factory.pem in ${TRUSTED_KEYS_DIR})`);
  // A file where the key folder belongs: it cannot be listed, so signatures stay required (fail closed).
  await fs.rm(dir, { recursive: true });
  await fs.writeFile(dir, 'not a folder');
  assert.deepEqual(await readMediaTrust(host), { signed: true, keyFiles: ['(unreadable)'] });
  assert.deepEqual(await loadTrustedKeys(host), { required: true, keys: [], problems: [{ path: TRUSTED_KEYS_DIR, message: 'cannot be listed (it is a file, not a folder); signatures are required but no key can be used' }] });
});

test('a trusted key file that cannot be read is a problem, and signatures stay required', async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'sno-keys-'));
  tmpDirs.push(root);
  const dir = path.join(root, TRUSTED_KEYS_DIR);
  await fs.mkdir(path.join(dir, 'folder.pem'), { recursive: true });
  await fs.writeFile(path.join(dir, 'factory.pem'), pem(ec));
  const keys = await loadTrustedKeys(new LocalHost({ root }));
  assert.equal(keys.required, true);
  assert.deepEqual(keys.keys.map((k) => k.file), [`${TRUSTED_KEYS_DIR}/factory.pem`]);
  assert.deepEqual(keys.problems, [{ path: `${TRUSTED_KEYS_DIR}/folder.pem`, message: 'cannot be read' }]);
});

test('keys given on a workstation (--trusted-key) always require signatures; an unusable one is a problem, never a relaxation', () => {
  const given = trustedKeysFrom([
    { file: 'factory.pem', pem: pem(ed) },
    { file: 'broken.pem', pem: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n' },
  ]);
  assert.equal(given.required, true);
  assert.deepEqual(given.keys.map((k) => [k.file, k.kind]), [['factory.pem', 'ed25519']]);
  assert.deepEqual(given.problems, [{ path: 'broken.pem', message: 'does not parse as a public key' }]);
  assert.deepEqual(trustedKeysFrom([{ file: 'only-bad.pem', pem: 'x' }]).required, true);
  assert.deepEqual(trustedKeysFrom([]), { required: true, keys: [], problems: [] });
});

test('an RSA key is named as such; a key whose check makes node:crypto throw never verifies anything', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
  assert.equal(parseTrustedKey(pem(rsa)), 'is an unsupported key (RSA): only Ed25519 and ECDSA P-256 keys are supported');
  // An Ed25519 key filed as ECDSA: verify('sha256', …) throws for it; a throw is "does not verify".
  const misfiled = [{ file: 'misfiled.pem', kind: 'ecdsa-p256' as const, key: ed.publicKey }];
  assert.throws(() => verify('sha256', data, { key: ed.publicKey, dsaEncoding: 'der' }, sign(null, data, ed.privateKey)));
  assert.equal(verifyWithTrustedKeys(data, sign(null, data, ed.privateKey), misfiled), undefined);
});

test('a signature file is at most 1024 base64 characters, whole groups of four with padding only at the end', () => {
  const group = 'QUJD';
  assert.ok(Buffer.isBuffer(decodeSignature(group.repeat(256))), '1024 characters');
  assert.equal(decodeSignature(group.repeat(257)), 'is not a base64-encoded signature');
  for (const ok of ['QQ==', 'QUI=', `${group}QQ==`]) assert.ok(Buffer.isBuffer(decodeSignature(ok)), ok);
  for (const bad of ['QUJ', 'Q===', '==QQ', 'QQ=Q', `${group}Q`, 'QU%=', '%%==']) assert.equal(decodeSignature(bad), 'is not a base64-encoded signature', bad);
  assert.deepEqual(decodeSignature('QU JD\n\tQQ==\n'), Buffer.from('ABCA'));
});
