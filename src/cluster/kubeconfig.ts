// A kubeconfig reduced to what the agent's client needs: the current context's server, TLS trust and
// credentials. Field names are client-go's clientcmd/api/v1 (types.go): `certificate-authority(-data)`,
// `insecure-skip-tls-verify`, `tls-server-name`, `client-certificate(-data)`, `client-key(-data)`,
// `token`, `tokenFile`. Relative file paths are relative to the kubeconfig file, as clientcmd resolves them.
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { parse as parseYaml } from 'yaml';

export interface Kubeconfig {
  /** Where it came from, for messages. */
  source: string;
  context: string;
  clusterName: string;
  userName: string;
  /** API server URL without a trailing slash, e.g. https://localhost:6443 */
  server: string;
  /** PEM CA bundle; absent = the system trust store. */
  ca?: Buffer;
  insecureSkipTlsVerify: boolean;
  /** Name to verify the server certificate against (and send as SNI) instead of the URL's host. */
  tlsServerName?: string;
  clientCert?: Buffer;
  clientKey?: Buffer;
  token?: string;
  /** Absolute path; the client re-reads it (bound service-account tokens rotate). */
  tokenFile?: string;
  /** The reader the kubeconfig was loaded with, so tokenFile is re-read the same way (e.g. under a host root). */
  readFile?: ReadFile;
}

export class KubeconfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KubeconfigError';
  }
}

export type ReadFile = (p: string) => Promise<Buffer>;

export async function loadKubeconfig(file: string, read: ReadFile = (p) => readFile(p)): Promise<Kubeconfig> {
  let text: string;
  try {
    text = (await read(file)).toString('utf8');
  } catch (e) {
    throw new KubeconfigError(`cannot read kubeconfig ${file}: ${describeFsError(e)}`);
  }
  return parseKubeconfig(text, { source: file, baseDir: path.dirname(path.resolve(file)), read });
}

interface ParseOptions {
  source: string;
  /** Directory relative paths are resolved against. */
  baseDir: string;
  read?: ReadFile;
}

type Dict = Record<string, unknown>;

export async function parseKubeconfig(text: string, opts: ParseOptions): Promise<Kubeconfig> {
  const read = opts.read ?? ((p: string) => readFile(p));
  const fail = (msg: string): never => { throw new KubeconfigError(`kubeconfig ${opts.source}: ${msg}`); };
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    return fail(`not valid YAML: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
  }
  if (!isDict(doc)) return fail('expected a mapping with clusters, users and contexts');

  const named = (key: 'clusters' | 'users' | 'contexts', inner: 'cluster' | 'user' | 'context'): Map<string, Dict> => {
    const raw = doc[key] ?? [];
    if (!Array.isArray(raw)) fail(`${key} must be a list`);
    const map = new Map<string, Dict>();
    (raw as unknown[]).forEach((entry, i) => {
      if (!isDict(entry) || typeof entry.name !== 'string') fail(`${key}[${i}].name must be a string`);
      const e = entry as Dict;
      const body = e[inner] ?? {};
      if (!isDict(body)) fail(`${key}[${i}].${inner} must be a mapping`);
      map.set(e.name as string, body as Dict);
    });
    return map;
  };
  const clusters = named('clusters', 'cluster');
  const users = named('users', 'user');
  const contexts = named('contexts', 'context');

  let contextName = doc['current-context'];
  if (contextName === undefined || contextName === '') {
    // kubectl refuses an unset current-context; with a single context there is no ambiguity.
    if (contexts.size === 1) contextName = [...contexts.keys()][0];
    else fail(`current-context is not set and there are ${contexts.size} contexts`);
  }
  if (typeof contextName !== 'string') return fail('current-context must be a string');
  const context = contexts.get(contextName) ?? fail(`current-context "${contextName}" is not among contexts [${[...contexts.keys()].join(', ')}]`);
  const clusterName = str(context.cluster, `contexts[${contextName}].cluster`, fail) ?? fail(`context "${contextName}" names no cluster`);
  const userName = str(context.user, `contexts[${contextName}].user`, fail) ?? '';
  const cluster = clusters.get(clusterName) ?? fail(`context "${contextName}" refers to cluster "${clusterName}", which is not defined`);
  const user = userName === '' ? {} : users.get(userName) ?? fail(`context "${contextName}" refers to user "${userName}", which is not defined`);

  const at = (field: string) => `clusters[${clusterName}].cluster.${field}`;
  const atUser = (field: string) => `users[${userName}].user.${field}`;
  const serverText = str(cluster.server, at('server'), fail) ?? fail(`${at('server')} is missing`);
  let url: URL;
  try {
    url = new URL(serverText);
  } catch {
    return fail(`${at('server')} "${serverText}" is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(`${at('server')} must be an https:// URL, got "${serverText}"`);
  if (cluster['proxy-url'] !== undefined) fail(`${at('proxy-url')} is not supported (the agent talks to the node-local API server directly)`);
  for (const unsupported of ['exec', 'auth-provider', 'username', 'password', 'as', 'as-groups']) {
    if (user[unsupported] !== undefined) fail(`${atUser(unsupported)} is not supported: use a client certificate or a token`);
  }

  const readRef = async (field: string, value: unknown): Promise<{ data: Buffer; file: string } | undefined> => {
    const p = str(value, field, fail);
    if (p === undefined || p === '') return undefined;
    const abs = path.resolve(opts.baseDir, p);
    try {
      return { data: await read(abs), file: abs };
    } catch (e) {
      return fail(`${field} file ${abs} cannot be read: ${describeFsError(e)}`);
    }
  };
  const dataOrFile = async (dataField: string, fileField: string, body: Dict, where: (f: string) => string): Promise<Buffer | undefined> => {
    const data = str(body[dataField], where(dataField), fail);
    if (data !== undefined && data !== '') {
      const compact = data.replace(/\s+/g, '');
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) fail(`${where(dataField)} is not base64`);
      return Buffer.from(compact, 'base64');
    }
    return (await readRef(where(fileField), body[fileField]))?.data;
  };

  const kc: Kubeconfig = {
    source: opts.source,
    context: contextName,
    clusterName,
    userName,
    server: serverText.replace(/\/+$/, ''),
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    readFile: read,
  };
  const ca = await dataOrFile('certificate-authority-data', 'certificate-authority', cluster, at);
  if (ca) kc.ca = ca;
  const serverName = str(cluster['tls-server-name'], at('tls-server-name'), fail);
  if (serverName) kc.tlsServerName = serverName;
  const cert = await dataOrFile('client-certificate-data', 'client-certificate', user, atUser);
  const key = await dataOrFile('client-key-data', 'client-key', user, atUser);
  if (cert && !key) fail(`${atUser('client-certificate')} is set but no client key is`);
  if (key && !cert) fail(`${atUser('client-key')} is set but no client certificate is`);
  if (cert && key) { kc.clientCert = cert; kc.clientKey = key; }
  const token = str(user.token, atUser('token'), fail);
  if (token) kc.token = token.trim();
  const tokenRef = await readRef(atUser('tokenFile'), user.tokenFile);
  if (tokenRef) {
    kc.tokenFile = tokenRef.file;
    if (!kc.token) kc.token = tokenRef.data.toString('utf8').trim();
  }

  // Fail here, naming the field, rather than at the first request with an OpenSSL message.
  if (kc.ca && pemCertificates(kc.ca) === 0) fail(`${at('certificate-authority(-data)')} holds no usable PEM certificate`);
  if (kc.clientCert && pemCertificates(kc.clientCert) === 0) fail(`${atUser('client-certificate(-data)')} holds no usable PEM certificate`);
  if (kc.clientKey) {
    try {
      createPrivateKey(kc.clientKey);
    } catch {
      fail(`${atUser('client-key(-data)')} is not a usable PEM private key`);
    }
  }
  try {
    createSecureContext({ cert: kc.clientCert, key: kc.clientKey });
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    fail(/key values mismatch/i.test(reason) ? 'the client key does not belong to the client certificate' : `the client certificate and key are not usable together (${reason})`);
  }
  return kc;
}

/** How many PEM certificates in `pem` parse (0 when none do, or one of them does not). */
function pemCertificates(pem: Buffer): number {
  const blocks = pem.toString('utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  try {
    for (const block of blocks) new X509Certificate(block);
  } catch {
    return 0;
  }
  return blocks.length;
}

function str(value: unknown, field: string, fail: (m: string) => never): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') return fail(`${field} must be a string`);
  return value;
}

function isDict(v: unknown): v is Dict {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describeFsError(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'permission denied';
  return e instanceof Error ? e.message : String(e);
}
