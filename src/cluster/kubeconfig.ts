// A kubeconfig reduced to what the agent's client needs: the current context's server, TLS trust and
// credentials. Field names are client-go's clientcmd/api/v1 (types.go): `certificate-authority(-data)`,
// `insecure-skip-tls-verify`, `tls-server-name`, `client-certificate(-data)`, `client-key(-data)`,
// `token`, `tokenFile`. Relative file paths are relative to the kubeconfig file, as clientcmd resolves them;
// every file is read through the caller's reader (on the node the host seam, so it stays under --root).
import * as path from 'node:path';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { parseYamlCore } from '../util/yaml';

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
  readFile: ReadFile;
}

export class KubeconfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'KubeconfigError';
  }
}

/**
 * Reads a file the kubeconfig names. On the node it is the host seam's readFile (src/host/host.ts), so a
 * path — absolute or relative — is read under --root like every other node file.
 */
export type ReadFile = (p: string) => Promise<Buffer>;

/** Loads the kubeconfig at `file`, reading it and every file it names through `read`. */
export async function loadKubeconfig(read: ReadFile, file: string): Promise<Kubeconfig> {
  let text: string;
  try {
    text = (await read(file)).toString('utf8');
  } catch (e) {
    throw new KubeconfigError(`cannot read kubeconfig ${file}: ${describeFsError(e)}`, { cause: e });
  }
  return parseKubeconfig(text, { source: file, baseDir: path.dirname(path.resolve(file)), read });
}

interface ParseOptions {
  source: string;
  /** Directory relative paths are resolved against. */
  baseDir: string;
  read: ReadFile;
}

type Dict = Record<string, unknown>;
/** Throws a KubeconfigError naming the kubeconfig. */
export type Fail = (message: string, cause?: unknown) => never;

/** The context the agent uses, with its cluster and user. */
export interface ChosenContext {
  context: string;
  clusterName: string;
  /** '' when the context names no user. */
  userName: string;
  cluster: Dict;
  user: Dict;
}

/** The server, TLS trust and credentials, read from data fields or the files they name. */
interface CredentialMaterial {
  ca?: Buffer;
  tlsServerName?: string;
  clientCert?: Buffer;
  clientKey?: Buffer;
  token?: string;
  tokenFile?: string;
}

export async function parseKubeconfig(text: string, opts: ParseOptions): Promise<Kubeconfig> {
  const fail: Fail = (msg, cause) => { throw new KubeconfigError(`kubeconfig ${opts.source}: ${msg}`, cause === undefined ? undefined : { cause }); };
  const chosen = pickContext(parseDocument(text, fail), fail);
  const server = checkServer(chosen, fail);
  refuseUnsupported(chosen, fail);
  const material = await readCredentials(chosen, opts, fail);
  checkTlsMaterial(material, chosen, fail);
  return {
    source: opts.source,
    context: chosen.context,
    clusterName: chosen.clusterName,
    userName: chosen.userName,
    server,
    insecureSkipTlsVerify: chosen.cluster['insecure-skip-tls-verify'] === true,
    readFile: opts.read,
    ...material,
  };
}

function parseDocument(text: string, fail: Fail): Dict {
  let doc: unknown;
  try {
    doc = parseYamlCore(text);
  } catch (e) {
    return fail(`not valid YAML: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`, e);
  }
  if (!isDict(doc)) return fail('expected a mapping with clusters, users and contexts');
  return doc;
}

/** The `clusters`/`users`/`contexts` list as name → body. */
function namedEntries(doc: Dict, key: 'clusters' | 'users' | 'contexts', inner: 'cluster' | 'user' | 'context', fail: Fail): Map<string, Dict> {
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
}

/** The current context (or the only one), and the cluster and user it refers to. Pure. */
export function pickContext(doc: Dict, fail: Fail): ChosenContext {
  const clusters = namedEntries(doc, 'clusters', 'cluster', fail);
  const users = namedEntries(doc, 'users', 'user', fail);
  const contexts = namedEntries(doc, 'contexts', 'context', fail);
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
  return { context: contextName, clusterName, userName, cluster, user };
}

const clusterField = (c: ChosenContext, field: string) => `clusters[${c.clusterName}].cluster.${field}`;
const userField = (c: ChosenContext, field: string) => `users[${c.userName}].user.${field}`;

/** The server URL without a trailing slash. */
function checkServer(chosen: ChosenContext, fail: Fail): string {
  const at = (field: string) => clusterField(chosen, field);
  const serverText = str(chosen.cluster.server, at('server'), fail) ?? fail(`${at('server')} is missing`);
  let url: URL;
  try {
    url = new URL(serverText);
  } catch (e) {
    return fail(`${at('server')} "${serverText}" is not a URL`, e);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(`${at('server')} must be an https:// URL, got "${serverText}"`);
  return serverText.replace(/\/+$/, '');
}

function refuseUnsupported(chosen: ChosenContext, fail: Fail): void {
  if (chosen.cluster['proxy-url'] !== undefined) fail(`${clusterField(chosen, 'proxy-url')} is not supported (the agent talks to the node-local API server directly)`);
  for (const unsupported of ['exec', 'auth-provider', 'username', 'password', 'as', 'as-groups']) {
    if (chosen.user[unsupported] !== undefined) fail(`${userField(chosen, unsupported)} is not supported: use a client certificate or a token`);
  }
}

/** Where a credential comes from: inline base64 data wins over a file path, as in clientcmd. Pure. */
export type CredentialSource = { data: Buffer } | { file: string } | undefined;

export function credentialSource(body: Dict, dataField: string, fileField: string, where: (f: string) => string, fail: Fail): CredentialSource {
  const data = str(body[dataField], where(dataField), fail);
  if (data !== undefined && data !== '') {
    const compact = data.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) fail(`${where(dataField)} is not base64`);
    return { data: Buffer.from(compact, 'base64') };
  }
  const file = str(body[fileField], where(fileField), fail);
  return file === undefined || file === '' ? undefined : { file };
}

async function readCredentials(chosen: ChosenContext, opts: ParseOptions, fail: Fail): Promise<CredentialMaterial> {
  const at = (field: string) => clusterField(chosen, field);
  const atUser = (field: string) => userField(chosen, field);
  const readRef = async (field: string, file: string): Promise<{ data: Buffer; file: string }> => {
    const abs = path.resolve(opts.baseDir, file);
    try {
      return { data: await opts.read(abs), file: abs };
    } catch (e) {
      return fail(`${field} file ${abs} cannot be read: ${describeFsError(e)}`, e);
    }
  };
  const material = async (source: CredentialSource, fileField: string): Promise<Buffer | undefined> =>
    source === undefined ? undefined : 'data' in source ? source.data : (await readRef(fileField, source.file)).data;

  const out: CredentialMaterial = {};
  const ca = await material(credentialSource(chosen.cluster, 'certificate-authority-data', 'certificate-authority', at, fail), at('certificate-authority'));
  if (ca) out.ca = ca;
  const serverName = str(chosen.cluster['tls-server-name'], at('tls-server-name'), fail);
  if (serverName) out.tlsServerName = serverName;
  const cert = await material(credentialSource(chosen.user, 'client-certificate-data', 'client-certificate', atUser, fail), atUser('client-certificate'));
  const key = await material(credentialSource(chosen.user, 'client-key-data', 'client-key', atUser, fail), atUser('client-key'));
  if (cert && !key) fail(`${atUser('client-certificate')} is set but no client key is`);
  if (key && !cert) fail(`${atUser('client-key')} is set but no client certificate is`);
  if (cert && key) { out.clientCert = cert; out.clientKey = key; }
  const token = str(chosen.user.token, atUser('token'), fail);
  if (token) out.token = token.trim();
  const tokenFile = str(chosen.user.tokenFile, atUser('tokenFile'), fail);
  if (tokenFile) {
    const ref = await readRef(atUser('tokenFile'), tokenFile);
    out.tokenFile = ref.file;
    if (!out.token) out.token = ref.data.toString('utf8').trim();
  }
  return out;
}

/** Fails here, naming the field, rather than at the first request with an OpenSSL message. */
function checkTlsMaterial(m: CredentialMaterial, chosen: ChosenContext, fail: Fail): void {
  if (m.ca && pemCertificates(m.ca) === 0) fail(`${clusterField(chosen, 'certificate-authority(-data)')} holds no usable PEM certificate`);
  if (m.clientCert && pemCertificates(m.clientCert) === 0) fail(`${userField(chosen, 'client-certificate(-data)')} holds no usable PEM certificate`);
  if (m.clientKey) {
    try {
      createPrivateKey(m.clientKey);
    } catch (e) {
      fail(`${userField(chosen, 'client-key(-data)')} is not a usable PEM private key`, e);
    }
  }
  try {
    createSecureContext({ cert: m.clientCert, key: m.clientKey });
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    fail(/key values mismatch/i.test(reason) ? 'the client key does not belong to the client certificate' : `the client certificate and key are not usable together (${reason})`, e);
  }
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

function str(value: unknown, field: string, fail: Fail): string | undefined {
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
