// Test PKI made with the real openssl at test time: a CA, server certificates (one for localhost, one
// only for an internal API name, to exercise tls-server-name), a client certificate and an unrelated CA.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export interface Pki {
  dir: string;
  caCert: string;
  /** SAN DNS:localhost, IP:127.0.0.1 */
  serverCert: string;
  serverKey: string;
  /** SAN DNS:api-int.sno1.example.test only */
  internalServerCert: string;
  internalServerKey: string;
  /** CN=system:admin, O=system:masters */
  clientCert: string;
  clientKey: string;
  /** A CA that signed nothing here. */
  otherCaCert: string;
  otherCaKey: string;
  cleanup(): void;
}

export const INTERNAL_API_NAME = 'api-int.sno1.example.test';

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function newKeyAndCsr(dir: string, name: string, subj: string, extra: string[] = []): void {
  openssl(dir, ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subj, ...extra]);
}

function sign(dir: string, name: string, ca: string, ext: string): void {
  writeFileSync(path.join(dir, `${name}.ext`), ext);
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-days', '2', '-extfile', `${name}.ext`, '-out', `${name}.crt`]);
}

export function makePki(): Pki {
  const dir = mkdtempSync(path.join(tmpdir(), 'sno-pki-'));
  try {
    for (const ca of ['ca', 'other-ca']) {
      openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${ca}.key`, '-out', `${ca}.crt`, '-subj', `/CN=${ca}`, '-days', '2']);
    }
    newKeyAndCsr(dir, 'server', '/CN=localhost');
    sign(dir, 'server', 'ca', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
    newKeyAndCsr(dir, 'internal', `/CN=${INTERNAL_API_NAME}`);
    sign(dir, 'internal', 'ca', `subjectAltName=DNS:${INTERNAL_API_NAME}\nextendedKeyUsage=serverAuth\n`);
    newKeyAndCsr(dir, 'client', '/O=system:masters/CN=system:admin');
    sign(dir, 'client', 'ca', 'extendedKeyUsage=clientAuth\n');
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const read = (f: string) => readFileSync(path.join(dir, f), 'utf8');
  return {
    dir,
    caCert: read('ca.crt'),
    serverCert: read('server.crt'),
    serverKey: read('server.key'),
    internalServerCert: read('internal.crt'),
    internalServerKey: read('internal.key'),
    clientCert: read('client.crt'),
    clientKey: read('client.key'),
    otherCaCert: read('other-ca.crt'),
    otherCaKey: read('other-ca.key'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
