// The site-config corpus (test/fixtures/site-configs/{valid,invalid}/<case>/, each with an expect.json) and
// what it takes to run a case: a temp copy of the case (so symlinks, FIFOs, oversized files, pins and
// signatures can be made at test time without touching the fixtures) and a temp host root carrying this
// machine's identity (sys/class/...) and trusted keys (etc/sno-reconfigure/trusted-keys). Shared by the unit
// corpus test (source) and the integration test (the built bundle).
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { promises as fs, readdirSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import type { LoadResult } from '../../../src/siteconfig/load';
import { PROJECT_ROOT } from '../../support/bundle';

export const CORPUS_DIR = path.join(PROJECT_ROOT, 'test', 'fixtures', 'site-configs');

export type CaseKind = 'valid' | 'invalid';
export type Status = 'valid' | 'invalid' | 'not-for-this-machine';

interface KeySpec {
  name: string;
  type: 'ed25519' | 'p256' | 'rsa' | 'garbage';
}

interface Setup {
  /** Files copied from the corpus directory (e.g. _pki/api.crt) into the case. */
  copy?: Array<{ from: string; to: string }>;
  identity?: { systemUUID?: string; serialNumber?: string; macs?: Record<string, string>; permMacs?: Record<string, string> };
  trustedKeys?: KeySpec[];
  /** Replace `@@sha256:<file>@@` in the case's text files with the sha256 of <file>. */
  pins?: boolean;
  /** Detached signatures; key 'untrusted' signs with a fresh key the node does not hold. */
  sign?: Array<{ file: string; key: string; encoding?: 'der' | 'p1363' }>;
  /**
   * Site-configs (relative to the case) made signed media: every file each references pinned in its spec.sha256,
   * then signed with the trusted key factory.pem (an Ed25519 key added to trustedKeys).
   */
  signed?: string[];
  /** Signed files are left without the spec.match and metadata.issued that every signed file gets otherwise. */
  unbound?: boolean;
  /** Appended after signing (tampering). */
  append?: Array<{ file: string; text: string }>;
  symlinks?: Array<{ path: string; target: string }>;
  generate?: Array<{ path: string; kind: 'oversize-yaml' | 'binary' | 'latin1' | 'fifo' | 'control' }>;
}

export interface Expect {
  description: string;
  status: Status;
  /** Relative to the case directory; the case directory itself when absent. */
  location?: string;
  /** Error paths that must all be reported ('.' = the location itself). */
  errors?: string[];
  /** Substrings that must each appear in some error message. */
  messages?: string[];
  /** Warning paths that must all be reported. */
  warnings?: string[];
  /** Substrings that must each appear in some not-for-this-machine reason. */
  reasons?: string[];
  /** metadata.name of the site-config that must be picked. */
  name?: string;
  setup?: Setup;
}

export interface PreparedCase {
  kind: CaseKind;
  name: string;
  expect: Expect;
  /** Absolute location to validate. */
  location: string;
  /** Host root with identity and trusted keys. */
  root: string;
  cleanup(): Promise<void>;
}

export function listCases(kind: CaseKind): string[] {
  return readdirSync(path.join(CORPUS_DIR, kind), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

export function readExpect(kind: CaseKind, name: string): Expect {
  return JSON.parse(readFileSync(path.join(CORPUS_DIR, kind, name, 'expect.json'), 'utf8')) as Expect;
}

const TEXT_FILE = /\.(ya?ml|json)$/;

async function walkFiles(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await walkFiles(dir, r)));
    else if (e.isFile()) out.push(r);
  }
  return out;
}

function makeKey(type: KeySpec['type']): { publicPem: string; privateKey?: KeyObject } {
  if (type === 'garbage') return { publicPem: '-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----\n' };
  const pair =
    type === 'ed25519'
      ? generateKeyPairSync('ed25519')
      : type === 'p256'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { publicPem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(), privateKey: pair.privateKey };
}

function signWith(key: KeyObject, data: Buffer, encoding: 'der' | 'p1363' = 'der'): Buffer {
  if (key.asymmetricKeyType === 'ed25519') return sign(null, data, key);
  return sign('sha256', data, { key, dsaEncoding: encoding === 'p1363' ? 'ieee-p1363' : 'der' });
}

async function generate(file: string, kind: NonNullable<Setup['generate']>[number]['kind']): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const header = 'apiVersion: sno-reconfigure.io/v1\nkind: SiteConfig\nmetadata:\n  name: generated\nspec:\n  baseDomain: store42.example.com\n';
  switch (kind) {
    case 'oversize-yaml':
      await fs.writeFile(file, header + `# ${'x'.repeat(98)}\n`.repeat(11_000));
      return;
    case 'binary':
      await fs.writeFile(file, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x00, 0x00, 0xff, 0xfe, 0x3a, 0x20, 0x0a]));
      return;
    case 'latin1':
      await fs.writeFile(file, Buffer.from(`${header}  hostname: caf\xe9\n`, 'latin1'));
      return;
    case 'control':
      await fs.writeFile(file, `${header}  clusterName: sno\x071\n`);
      return;
    case 'fifo':
      execFileSync('mkfifo', [file]);
      return;
  }
}

/** The serial number a signed case's machine has when the case gives no identity (and its spec.match names). */
const CORPUS_SERIAL = 'CORPUS-0001';

/** Adds metadata.issued and, when absent, spec.match (the case's serial number) to a signed YAML site-config. */
async function bind(file: string, identity: Setup['identity']): Promise<void> {
  if (!/\.ya?ml$/.test(file)) return;
  const doc = parseDocument(await fs.readFile(file, 'utf8'));
  if (!doc.hasIn(['metadata', 'issued'])) doc.setIn(['metadata', 'issued'], '2026-11-01T09:00:00Z');
  if (!doc.hasIn(['spec', 'match'])) doc.setIn(['spec', 'match'], identity?.serialNumber ? { serialNumber: identity.serialNumber } : identity?.systemUUID ? { systemUUID: identity.systemUUID } : { serialNumber: CORPUS_SERIAL });
  await fs.writeFile(file, doc.toString());
}

/** Pins every file a site-config references (fields ending in File, extraManifestFiles, folders expanded) in its spec.sha256. */
async function pinReferences(file: string): Promise<void> {
  const doc = parseDocument(await fs.readFile(file, 'utf8'));
  const dir = path.dirname(file);
  const refs: string[] = [];
  const walk = (v: unknown): void => {
    if (v === null || typeof v !== 'object') return;
    for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
      if (k.endsWith('File') && typeof child === 'string') refs.push(child);
      else if (k === 'extraManifestFiles' && Array.isArray(child)) refs.push(...child.filter((c): c is string => typeof c === 'string'));
      else walk(child);
    }
  };
  walk((doc.toJS() as { spec?: unknown }).spec);
  const pins: Record<string, string> = {};
  for (const ref of refs) {
    const names = ref.endsWith('/') ? readdirSync(path.join(dir, ref)).filter((n) => /\.(ya?ml|json)$/i.test(n)).map((n) => `${ref}${n}`) : [ref];
    for (const n of names) pins[n] = createHash('sha256').update(readFileSync(path.join(dir, n))).digest('hex');
  }
  if (Object.keys(pins).length > 0) doc.setIn(['spec', 'sha256'], pins);
  await fs.writeFile(file, doc.toString());
}

export async function prepareCase(kind: CaseKind, name: string): Promise<PreparedCase> {
  const expect = readExpect(kind, name);
  const setup = expect.setup ?? {};
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), `sno-sc-${name}-`));
  const cleanup = () => fs.rm(tmp, { recursive: true, force: true });
  try {
    const caseDir = path.join(tmp, 'media');
    const root = path.join(tmp, 'root');
    await fs.cp(path.join(CORPUS_DIR, kind, name), caseDir, { recursive: true });
    await fs.rm(path.join(caseDir, 'expect.json'));
    await fs.mkdir(root, { recursive: true });
    for (const c of setup.copy ?? []) {
      await fs.mkdir(path.dirname(path.join(caseDir, c.to)), { recursive: true });
      await fs.copyFile(path.join(CORPUS_DIR, c.from), path.join(caseDir, c.to));
    }
    for (const g of setup.generate ?? []) await generate(path.join(caseDir, g.path), g.kind);
    if (setup.pins) {
      for (const rel of (await walkFiles(caseDir)).filter((f) => TEXT_FILE.test(f))) {
        const file = path.join(caseDir, rel);
        const text = await fs.readFile(file, 'utf8');
        const replaced = text.replace(/@@sha256:([^@]+)@@/g, (_, target: string) => createHash('sha256').update(readFileSync(path.join(caseDir, target))).digest('hex'));
        if (replaced !== text) await fs.writeFile(file, replaced);
      }
    }
    const privateKeys = new Map<string, KeyObject>();
    const signed = setup.signed ?? [];
    for (const k of [...(setup.trustedKeys ?? []), ...(signed.length > 0 ? [{ name: 'factory.pem', type: 'ed25519' as const }] : [])]) {
      const made = makeKey(k.type);
      const dir = path.join(root, 'etc/sno-reconfigure/trusted-keys');
      await fs.mkdir(dir, { recursive: true });
      await fs.writeFile(path.join(dir, k.name), made.publicPem);
      if (made.privateKey) privateKeys.set(k.name, made.privateKey);
    }
    for (const file of signed) await pinReferences(path.join(caseDir, file));
    const signs: NonNullable<Setup['sign']> = [...(setup.sign ?? []), ...signed.map((file) => ({ file, key: 'factory.pem' }))];
    // Signed means bound (src/siteconfig/trust.ts): each signed file names a machine and its issue date, unless
    // the case is about a file that does not.
    if (!setup.unbound) for (const s of signs) await bind(path.join(caseDir, s.file), setup.identity);
    if (signs.length > 0 && !setup.unbound && !setup.identity) setup.identity = { serialNumber: CORPUS_SERIAL };
    for (const s of signs) {
      const key = s.key === 'untrusted' ? generateKeyPairSync('ed25519').privateKey : privateKeys.get(s.key);
      if (!key) throw new Error(`case ${name}: no private key ${s.key}`);
      const data = await fs.readFile(path.join(caseDir, s.file));
      await fs.writeFile(path.join(caseDir, `${s.file}.sig`), `${signWith(key, data, s.encoding).toString('base64')}\n`);
    }
    for (const a of setup.append ?? []) await fs.appendFile(path.join(caseDir, a.file), a.text);
    for (const l of setup.symlinks ?? []) await fs.symlink(l.target, path.join(caseDir, l.path));
    const id = setup.identity;
    if (id) {
      const dmi = path.join(root, 'sys/class/dmi/id');
      await fs.mkdir(dmi, { recursive: true });
      if (id.systemUUID) await fs.writeFile(path.join(dmi, 'product_uuid'), `${id.systemUUID}\n`);
      if (id.serialNumber) await fs.writeFile(path.join(dmi, 'product_serial'), `${id.serialNumber}\n`);
      for (const [ifname, mac] of Object.entries(id.macs ?? {})) {
        await fs.mkdir(path.join(root, 'sys/class/net', ifname), { recursive: true });
        await fs.writeFile(path.join(root, 'sys/class/net', ifname, 'address'), `${mac}\n`);
      }
      for (const [ifname, mac] of Object.entries(id.permMacs ?? {})) {
        await fs.mkdir(path.join(root, 'sys/class/net', ifname, 'bonding_slave'), { recursive: true });
        await fs.writeFile(path.join(root, 'sys/class/net', ifname, 'bonding_slave', 'perm_hwaddr'), `${mac}\n`);
      }
    }
    const location = expect.location ? path.join(caseDir, expect.location) : caseDir;
    return { kind, name, expect, location, root, cleanup };
  } catch (e) {
    await cleanup();
    throw e;
  }
}

/** What a validation run said, in a form both the library result and the CLI's --json output map to. */
export interface Outcome {
  status: Status;
  errors: Array<{ path: string; message: string }>;
  warnings: Array<{ path: string; message: string }>;
  reasons: string[];
  name?: string;
}

/** Paths naming the location itself read '.' so that expectations do not depend on temp directory names. */
export function normalizeLocationPaths(outcome: Outcome, location: string): Outcome {
  // Two processes read the clock a moment apart: a message quoting it (metadata.expires) differs only there.
  const fix = (p: { path: string; message: string }) => ({ ...p, path: p.path === location ? '.' : p.path, message: p.message.replace(/clock says [0-9T:.-]+Z/, 'clock says <now>') });
  return { ...outcome, errors: outcome.errors.map(fix), warnings: outcome.warnings.map(fix) };
}

/** Strings that appear in the corpus's secrets: no message may ever contain them. */
const SECRETS = ['dXNlcjpwYXNzd29yZA', 's3cret', 'PRIVATE KEY-----\n', 'not base64!'];

/** Problems of `outcome` against the case's expectations (empty when it meets them). */
export function unmetExpectations(outcome: Outcome, expect: Expect): string[] {
  const unmet: string[] = [];
  const shown = () => JSON.stringify({ status: outcome.status, errors: outcome.errors, warnings: outcome.warnings, reasons: outcome.reasons }, null, 1);
  if (outcome.status !== expect.status) unmet.push(`status ${outcome.status}, expected ${expect.status}: ${shown()}`);
  if (expect.status === 'valid' && outcome.errors.length > 0) unmet.push(`errors on a valid case: ${shown()}`);
  if (expect.status === 'invalid' && outcome.errors.length === 0) unmet.push(`no errors on an invalid case: ${shown()}`);
  for (const p of expect.errors ?? []) if (!outcome.errors.some((e) => e.path === p)) unmet.push(`missing error at ${p}: ${shown()}`);
  for (const m of expect.messages ?? []) if (!outcome.errors.some((e) => e.message.includes(m))) unmet.push(`no error message contains "${m}": ${shown()}`);
  for (const p of expect.warnings ?? []) if (!outcome.warnings.some((w) => w.path === p)) unmet.push(`missing warning at ${p}: ${shown()}`);
  for (const r of expect.reasons ?? []) if (!outcome.reasons.some((x) => x.includes(r))) unmet.push(`no reason contains "${r}": ${shown()}`);
  if (expect.name !== undefined && outcome.name !== undefined && outcome.name !== expect.name) unmet.push(`picked ${outcome.name}, expected ${expect.name}`);
  for (const p of [...outcome.errors, ...outcome.warnings]) {
    for (const s of SECRETS) if (p.message.includes(s)) unmet.push(`a message leaks secret material (${s}): ${p.path}: ${p.message}`);
  }
  return unmet;
}

/** The library result as an Outcome. */
export function outcomeOf(result: LoadResult): Outcome {
  switch (result.status) {
    case 'valid':
      return { status: 'valid', errors: [], warnings: result.site.warnings, reasons: [], name: result.site.resolved.name };
    case 'invalid':
      return { status: 'invalid', errors: result.errors, warnings: result.warnings, reasons: [] };
    case 'not-for-this-machine':
      return { status: 'not-for-this-machine', errors: [], warnings: [], reasons: result.reasons };
  }
}
