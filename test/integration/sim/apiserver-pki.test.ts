// The simulator's PKI, checked with real openssl: CA, serving and client certificates, kubeconfig files,
// and CSR signing for the ECDSA P-256 and RSA requests kubelets and tools make.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { createCa, describeCertificate, issueClientCert, issueServerCert, parseCsr, sharedCa, signCsr, writeKubeconfig, type CertificateAuthority } from '../../sim/pki';

let tmp: string;
let ca: CertificateAuthority;

function opensslText(pem: string): string {
  const f = path.join(tmp, `c${Math.random().toString(16).slice(2)}.pem`);
  writeFileSync(f, pem);
  return execFileSync('openssl', ['x509', '-in', f, '-noout', '-text'], { encoding: 'utf8' });
}

function opensslVerify(pem: string, purpose?: string): string {
  const caFile = path.join(tmp, 'ca.pem');
  writeFileSync(caFile, ca.certPem);
  const f = path.join(tmp, `v${Math.random().toString(16).slice(2)}.pem`);
  writeFileSync(f, pem);
  return execFileSync('openssl', ['verify', '-CAfile', caFile, ...(purpose ? ['-purpose', purpose] : []), f], { encoding: 'utf8' }).trim();
}

function opensslCsr(subject: string, keyArgs: string[], extra: string[] = []): string {
  const key = path.join(tmp, `k${Math.random().toString(16).slice(2)}`);
  execFileSync('openssl', ['req', '-new', ...keyArgs, '-nodes', '-keyout', key, '-out', `${key}.csr`, '-subj', subject, ...extra], { stdio: 'ignore' });
  return readFileSync(`${key}.csr`, 'utf8');
}

describe('simulator PKI', () => {
  before(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'sim-pki-'));
    ca = sharedCa();
  });

  after(() => rmSync(tmp, { recursive: true, force: true }));

  test('the CA is a self-signed RSA 2048 CA certificate', () => {
    const text = opensslText(ca.certPem);
    assert.match(text, /Public-Key: \(2048 bit\)/);
    assert.match(text, /CA:TRUE/);
    assert.match(text, /Certificate Sign, CRL Sign/);
    assert.equal(sharedCa(), ca, 'shared per process');
    const x = new X509Certificate(ca.certPem);
    assert.ok(x.verify(x.publicKey));
  });

  test('server certificates carry the SANs and verify for TLS server use', () => {
    const s = issueServerCert(ca, { dnsNames: ['api.sno1.example.com', 'localhost'], ips: ['127.0.0.1', 'fd00::10'] });
    assert.equal(opensslVerify(s.certPem, 'sslserver').endsWith(': OK'), true);
    const d = describeCertificate(s.certPem);
    assert.deepEqual(d.sans.dnsNames, ['api.sno1.example.com', 'localhost']);
    assert.deepEqual(d.sans.ipAddresses, ['127.0.0.1', 'fd00::10']);
    assert.equal(d.issuer.commonName, ca.name);
    assert.ok(new X509Certificate(s.certPem).checkPrivateKey(createPrivateKey(s.keyPem)), 'the key matches the certificate');
    assert.throws(() => issueServerCert(ca, {}), /dnsNames or ips/);
  });

  test('client certificates: CN = user, O = groups, TLS client use; RSA keys on request', () => {
    const c = issueClientCert(ca, { user: 'system:node:sno1', groups: ['system:nodes'], keyType: 'rsa' });
    assert.equal(opensslVerify(c.certPem, 'sslclient').endsWith(': OK'), true);
    const d = describeCertificate(c.certPem);
    assert.deepEqual([d.subject.commonName, d.subject.organizations], ['system:node:sno1', ['system:nodes']]);
    assert.match(opensslText(c.certPem), /TLS Web Client Authentication/);
  });

  test('signCsr signs a kubelet-style ECDSA P-256 request, copying subject and SANs, with the given usages', () => {
    const csr = opensslCsr('/O=system:nodes/CN=system:node:sno1', ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'], ['-addext', 'subjectAltName=DNS:sno1,IP:192.168.1.10,IP:fd00:0:0:0:0:0:0:10']);
    const parsed = parseCsr(csr);
    assert.deepEqual([parsed.keyType, parsed.subject.commonName, parsed.dnsNames, parsed.ipAddresses], ['ec', 'system:node:sno1', ['sno1'], ['192.168.1.10', 'fd00::10']]);
    const cert = signCsr(ca, csr, { usages: ['digital signature', 'server auth'], validityDays: 30 });
    assert.equal(opensslVerify(cert, 'sslserver').endsWith(': OK'), true);
    const text = opensslText(cert);
    assert.match(text, /Public Key Algorithm: id-ecPublicKey/);
    assert.match(text, /Subject: O = system:nodes, CN = system:node:sno1/);
    assert.match(text, /Digital Signature/);
    assert.match(text, /TLS Web Server Authentication/);
    const d = describeCertificate(cert);
    assert.deepEqual(d.sans.ipAddresses, ['192.168.1.10', 'fd00::10']);
    const days = (d.notAfter.getTime() - d.notBefore.getTime()) / 86_400_000;
    assert.equal(Math.round(days), 30);
    assert.ok(d.notBefore.getTime() < Date.now() - 60_000, 'backdated like the kube signer');
  });

  test('signCsr handles RSA requests and rejects tampered ones and unknown usages', () => {
    const csr = opensslCsr('/O=system:nodes/CN=system:node:sno1', ['-newkey', 'rsa:2048']);
    const cert = signCsr(ca, csr, { usages: ['digital signature', 'key encipherment', 'client auth'] });
    assert.equal(opensslVerify(cert, 'sslclient').endsWith(': OK'), true);
    const tampered = csr.replace(/(\n[A-Za-z0-9+/]{30})([A-Za-z0-9])/, (_m, a: string, b: string) => a + (b === 'A' ? 'B' : 'A'));
    assert.throws(() => signCsr(ca, tampered, { usages: ['client auth'] }), /verification|structure|parse/);
    assert.throws(() => signCsr(ca, csr, { usages: ['teleport'] }), /unknown key usage "teleport"/);
    assert.throws(() => parseCsr('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'), /CERTIFICATE REQUEST/);
  });

  test('certificates of one CA do not verify against another', () => {
    const other = createCa('other-ca');
    const c = issueClientCert(other, { user: 'x' });
    assert.equal(new X509Certificate(c.certPem).verify(new X509Certificate(ca.certPem).publicKey), false);
    assert.equal(new X509Certificate(c.certPem).verify(new X509Certificate(other.certPem).publicKey), true);
  });

  test('writeKubeconfig writes a 0600 kubeconfig with embedded data, for certificates or tokens', () => {
    const c = issueClientCert(ca, { user: 'system:admin', groups: ['system:masters'] });
    const file = writeKubeconfig(path.join(tmp, 'nested', 'kubeconfig'), { server: 'https://127.0.0.1:6443', caPem: ca.certPem, clientCertPem: c.certPem, clientKeyPem: c.keyPem });
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const doc = parse(readFileSync(file, 'utf8')) as { 'current-context': string; clusters: { cluster: Record<string, string> }[]; users: { user: Record<string, string> }[] };
    assert.equal(doc.clusters[0].cluster.server, 'https://127.0.0.1:6443');
    assert.equal(Buffer.from(doc.users[0].user['client-certificate-data'], 'base64').toString(), c.certPem);
    assert.equal(Buffer.from(doc.users[0].user['client-key-data'], 'base64').toString(), c.keyPem);
    const tokenFile = writeKubeconfig(path.join(tmp, 'token-kubeconfig'), { server: 'https://x:6443', caPem: ca.certPem, token: 'sha256~abc' });
    assert.equal((parse(readFileSync(tokenFile, 'utf8')) as { users: { user: { token: string } }[] }).users[0].user.token, 'sha256~abc');
  });
});
