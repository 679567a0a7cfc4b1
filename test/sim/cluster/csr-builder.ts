// Byte-real PKCS#10 requests, built the way kubelet builds them: a fresh ECDSA P-256 key
// (client-go util/certificate/certificate_manager.go generateCSR: ecdsa.GenerateKey(elliptic.P256())),
// subject O=system:nodes then CN=system:node:<name> (Go encodes O before CN), SANs only on serving
// requests. openssl writes the request (node:crypto cannot create CSRs); the key comes from node:crypto
// in SEC1 "EC PRIVATE KEY" PEM, the block type kubelet stores (keyutil.ECPrivateKeyBlockType).
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface CsrSubject {
  commonName: string;
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  emails?: string[];
  uris?: string[];
  /** kubelet uses ECDSA P-256; RSA exists to build the legacy/odd requests a policy must also parse. */
  keyType?: 'ec' | 'rsa';
}

export interface BuiltCsr {
  csrPem: string;
  keyPem: string;
}

/** Generates a key and a PKCS#10 request for it. */
export async function buildCsr(subject: CsrSubject): Promise<BuiltCsr> {
  const keyPem =
    subject.keyType === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()
      : generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'sec1', format: 'pem' }).toString();
  return { csrPem: await csrForKey(keyPem, subject), keyPem };
}

/** A PKCS#10 request for an existing key. */
export async function csrForKey(keyPem: string, subject: CsrSubject): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sim-csr-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const cfgFile = join(dir, 'req.cnf');
    await writeFile(keyFile, keyPem, { mode: 0o600 });
    await writeFile(cfgFile, opensslConfig(subject));
    const { stdout } = await execFileAsync('openssl', ['req', '-new', '-sha256', '-key', keyFile, '-config', cfgFile, '-outform', 'PEM'], { encoding: 'utf8' });
    if (!stdout.includes('BEGIN CERTIFICATE REQUEST')) throw new Error('openssl req produced no CERTIFICATE REQUEST');
    return stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A private config (never the system's openssl.cnf, whose defaults differ between distributions): the
 * subject in the given order and, only when there are SANs, an extension request with subjectAltName —
 * exactly what Go's x509.CreateCertificateRequest emits for kubelet's templates.
 */
function opensslConfig(s: CsrSubject): string {
  const dn: string[] = [];
  (s.organizations ?? []).forEach((o, i) => dn.push(`${i}.O = ${escapeValue(o)}`));
  dn.push(`CN = ${escapeValue(s.commonName)}`);
  const sans = [
    ...(s.dnsNames ?? []).map((d) => `DNS:${d}`),
    ...(s.ipAddresses ?? []).map((ip) => `IP:${ip}`),
    ...(s.emails ?? []).map((e) => `email:${e}`),
    ...(s.uris ?? []).map((u) => `URI:${u}`),
  ];
  const lines = ['[req]', 'prompt = no', 'distinguished_name = dn', 'string_mask = utf8only', 'utf8 = yes'];
  if (sans.length > 0) lines.push('req_extensions = ext');
  lines.push('[dn]', ...dn);
  if (sans.length > 0) lines.push('[ext]', `subjectAltName = ${sans.join(',')}`);
  return `${lines.join('\n')}\n`;
}

function escapeValue(v: string): string {
  if (/[\n\r]/.test(v)) throw new Error(`subject value must be a single line: ${JSON.stringify(v)}`);
  return v.replace(/\\/g, '\\\\').replace(/\$/g, '\\$');
}
