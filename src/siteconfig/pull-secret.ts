// The pull secret: the `.dockerconfigjson` of openshift-config/pull-secret, `{"auths": {"<registry>":
// {"auth": base64("user:password"), "email": ...}}}` (openshift-docs images-update-global-pull-secret.adoc;
// reference/anchor-ztpfw-domain.md 3.4). Entries may give username+password instead of auth (containers-auth.json(5)).
// Registry keys are a host[:port] or a namespace host[:port]/path (containers-auth.json(5): "a single hostname
// (e.g., docker.io) or a namespace (e.g., quay.io/user/image)"); no scheme, tag or wildcard. Nothing of the secret ever
// appears in a message: only key names and what is wrong.
import { repositoryProblem } from './net';
import { Findings, controlCharIndex, describeType, isPlainObject, subPath } from './problems';
import { unknownFieldMessage } from './suggest';
import type { PullSecret, PullSecretEntry } from './types';

const ENTRY_KEYS = ['auth', 'username', 'password', 'email'];
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export interface PullSecretOutcome {
  findings: Findings;
  secret?: PullSecret;
}

/**
 * Checks a pull secret given as a mapping or as JSON text (the form install-config.yaml uses); `path` is the
 * field it came from (`spec.pullSecret`), `note` says which file it was read from, if any.
 */
export function validatePullSecret(value: unknown, path: string, note = ''): PullSecretOutcome {
  const f = new Findings();
  const error = (p: string, m: string) => f.error(p, `${m}${note}`);
  let data = value;
  if (typeof value === 'string') {
    try {
      data = JSON.parse(value);
    } catch {
      error(path, 'is not valid JSON: expected {"auths": {"<registry>": {"auth": "<base64 of user:password>"}}}');
      return { findings: f };
    }
  }
  if (!isPlainObject(data)) {
    error(path, `expected a mapping {"auths": {...}}, got ${describeType(data)}`);
    return { findings: f };
  }
  for (const key of Object.keys(data)) if (key !== 'auths') error(subPath(path, key), unknownFieldMessage(key, ['auths']));
  const authsPath = subPath(path, 'auths');
  if (data.auths === undefined) {
    error(authsPath, 'is required: the registries and their credentials');
    return { findings: f };
  }
  if (!isPlainObject(data.auths)) {
    error(authsPath, `expected a mapping of registry to credentials, got ${describeType(data.auths)}`);
    return { findings: f };
  }
  const registries = Object.keys(data.auths);
  if (registries.length === 0) error(authsPath, 'has no registries');
  const auths: Record<string, PullSecretEntry> = {};
  for (const registry of registries) {
    const p = subPath(authsPath, registry);
    const registryProblem = repositoryProblem(registry, { allowWildcard: false });
    if (registryProblem !== undefined) error(p, `registry key ${registryProblem}`);
    const entry = data.auths[registry];
    if (!isPlainObject(entry)) {
      error(p, `expected a mapping with auth (or username and password), got ${describeType(entry)}`);
      continue;
    }
    let entryOk = true;
    for (const key of Object.keys(entry)) {
      if (!ENTRY_KEYS.includes(key)) {
        error(subPath(p, key), unknownFieldMessage(key, ENTRY_KEYS));
        entryOk = false;
      }
    }
    const wrongTypes = ENTRY_KEYS.filter((key) => entry[key] !== undefined && typeof entry[key] !== 'string');
    for (const key of wrongTypes) error(subPath(p, key), `expected a string, got ${describeType(entry[key])}`);
    if (wrongTypes.length > 0) continue;
    const { auth, username, password, email } = entry as PullSecretEntry;
    let decoded: { user: string; password: string } | undefined;
    if (auth !== undefined) {
      decoded = decodeAuth(auth);
      if (!decoded) {
        error(subPath(p, 'auth'), 'must be the base64 encoding of "user:password" (e.g. the output of: echo -n "user:password" | base64 -w0)');
        entryOk = false;
      }
    }
    if (auth === undefined && username === undefined && password === undefined) {
      error(p, 'needs credentials: auth, or username and password');
      entryOk = false;
    } else if (auth === undefined && (username === undefined || username === '' || password === undefined || password === '')) {
      error(subPath(p, username === undefined || username === '' ? 'username' : 'password'), 'is required and must not be empty when auth is not given');
      entryOk = false;
    } else if (decoded && (username !== undefined || password !== undefined) && (username !== decoded.user || (password !== undefined && password !== decoded.password))) {
      error(p, 'auth and username/password disagree: give one or the other');
      entryOk = false;
    }
    if (entryOk) {
      auths[registry] = {
        ...(auth !== undefined ? { auth } : {}),
        ...(username !== undefined ? { username } : {}),
        ...(password !== undefined ? { password } : {}),
        ...(email !== undefined ? { email } : {}),
      };
    }
  }
  return f.ok ? { findings: f, secret: { auths } } : { findings: f };
}

function decodeAuth(auth: string): { user: string; password: string } | undefined {
  const compact = auth.trim();
  if (compact === '' || !BASE64.test(compact)) return undefined;
  const text = Buffer.from(compact, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon <= 0 || colon === text.length - 1) return undefined;
  if (controlCharIndex(text) >= 0) return undefined;
  return { user: text.slice(0, colon), password: text.slice(colon + 1) };
}
