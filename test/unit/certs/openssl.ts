// Test CAs and certificates made by the real `openssl` CLI (independent of the node-forge code under test).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export interface Pem {
  certPem: string;
  keyPem: string;
}

export class OpensslWorkdir {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'sno-certs-'));

  file(name: string): string {
    return path.join(this.dir, name);
  }

  run(args: string[], input?: string): string {
    return execFileSync('openssl', args, { cwd: this.dir, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], ...(input !== undefined ? { input } : {}) });
  }

  /** A self-signed RSA CA like OpenShift's signers (PKCS#1 key, as library-go writes them). */
  rootCa(name: string, opts: { days?: number; subject?: string; keyType?: 'rsa' | 'ec' | 'ed25519' } = {}): Pem {
    const key = this.file(`${name}.key`);
    const crt = this.file(`${name}.crt`);
    if (opts.keyType === 'ec') this.run(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
    else if (opts.keyType === 'ed25519') this.run(['genpkey', '-algorithm', 'ed25519', '-out', key]);
    else this.run(['genrsa', '-traditional', '-out', key, '2048']);
    this.run(['req', '-x509', '-new', '-key', key, '-out', crt, '-days', String(opts.days ?? 3650), '-subj', opts.subject ?? `/OU=openshift/CN=${name}`,
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature,keyEncipherment']);
    return { certPem: readFileSync(crt, 'utf8'), keyPem: readFileSync(key, 'utf8') };
  }

  /** A certificate signed by `ca` (a CA when `isCa`), with the given SAN DNS names. */
  signed(name: string, ca: Pem, opts: { dnsNames?: string[]; isCa?: boolean; days?: number; serverAuth?: boolean } = {}): Pem {
    const key = this.file(`${name}.key`);
    const csr = this.file(`${name}.csr`);
    const crt = this.file(`${name}.crt`);
    const caCrt = this.file(`${name}-issuer.crt`);
    const caKey = this.file(`${name}-issuer.key`);
    writeFileSync(caCrt, ca.certPem);
    writeFileSync(caKey, ca.keyPem);
    this.run(['genrsa', '-out', key, '2048']);
    this.run(['req', '-new', '-key', key, '-out', csr, '-subj', `/CN=${opts.dnsNames?.[0] ?? name}`]);
    const ext = this.file(`${name}.ext`);
    const lines = opts.isCa
      ? ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign', 'subjectKeyIdentifier=hash', 'authorityKeyIdentifier=keyid']
      : ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature,keyEncipherment', `extendedKeyUsage=${opts.serverAuth === false ? 'clientAuth' : 'serverAuth'}`, 'subjectKeyIdentifier=hash', 'authorityKeyIdentifier=keyid'];
    if (opts.dnsNames?.length) lines.push(`subjectAltName=${opts.dnsNames.map((n) => `DNS:${n}`).join(',')}`);
    writeFileSync(ext, `${lines.join('\n')}\n`);
    this.run(['x509', '-req', '-in', csr, '-CA', caCrt, '-CAkey', caKey, '-CAcreateserial', '-out', crt, '-days', String(opts.days ?? 365), '-extfile', ext]);
    return { certPem: readFileSync(crt, 'utf8'), keyPem: readFileSync(key, 'utf8') };
  }

  /** `openssl x509 -text` of a PEM certificate. */
  text(certPem: string): string {
    return this.run(['x509', '-noout', '-text'], certPem);
  }

  /** `openssl verify` with the server purpose and host check; returns the output or throws. */
  verify(certPem: string, caPem: string, host?: string): string {
    const leaf = this.file(`verify-${Date.now()}-${Math.random()}.pem`);
    const ca = `${leaf}.ca`;
    writeFileSync(leaf, certPem);
    writeFileSync(ca, caPem);
    return this.run(['verify', '-purpose', 'sslserver', '-CAfile', ca, ...(host ? ['-verify_hostname', host] : []), leaf]);
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
