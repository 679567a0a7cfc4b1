import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { decodeSignature, loadTrustedKeys, parseTrustedKey, verifyWithTrustedKeys } from '../../../src/siteconfig/signature';
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
