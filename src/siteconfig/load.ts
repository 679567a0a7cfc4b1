// Finding and loading the site-config at a location on this machine (DESIGN.md section 4): a file; a
// directory or mounted volume holding site-config.yaml (or .yml/.json); or one holding site-configs/*.yaml,
// from which the file whose spec.match fits this machine is picked. Referenced files must stay inside the
// location (for site-configs/, the volume: machines may share files such as a CA bundle).
import * as path from 'node:path';
import { whyUnreadable, type Host } from '../host/host';
import { validateSiteConfigFile, type FileValidation } from './file-validation';
import { isSymbolicLink, listDirectory, realPathIfExists, isInside, statKind } from './files';
import { matchProblems, readMachineIdentity, type MachineIdentity } from './identity';
import { loadTrustedKeys, type TrustedKeys } from './signature';
import { NODE_KEY_FILE } from '../paths';
import { SEED_RECONFIGURATION_FILE } from './seed-reconfiguration';
import type { LastIssued } from './validation/context';
import type { LoadedSiteConfig, MachineMatch, ValidationProblem } from './types';
import { MULTI_DIR, SITE_CONFIG_NAMES } from './media-names';

export type LoadResult =
  | { status: 'valid'; site: LoadedSiteConfig }
  | { status: 'invalid'; errors: ValidationProblem[]; warnings: ValidationProblem[]; sourcePath?: string }
  | { status: 'not-for-this-machine'; reasons: string[] };

export interface LoadOptions {
  host: Host;
  /** Validation time (certificate expiry); defaults to now. */
  now?: Date;
  /** This machine's identity; read under the host root when not given. */
  identity?: MachineIdentity;
}

export { SITE_CONFIG_NAMES, MULTI_DIR };
const CONFIG_EXTENSIONS = ['.yaml', '.yml', '.json'];

export interface Candidate {
  /** Real path of the file. */
  filePath: string;
  /** Shown in messages: relative to the location for a directory, the file name for a file. */
  display: string;
  /** Real path that referenced files must stay inside. */
  rootDir: string;
}

export type Located =
  | { kind: 'single'; candidate: Candidate }
  | { kind: 'multi'; candidates: Candidate[] }
  | { kind: 'error'; problem: ValidationProblem };

/** Which file(s) a location holds, without reading them. */
export async function locateSiteConfigs(location: string): Promise<Located> {
  const abs = path.resolve(location);
  const fail = (message: string): Located => ({ kind: 'error', problem: { path: location, message } });
  const kind = await statKind(abs);
  if (kind === 'missing') return fail('does not exist');
  if (kind === 'other') return fail('is neither a file nor a directory');
  const real = (await realPathIfExists(abs))!;
  if (kind === 'file') {
    return { kind: 'single', candidate: { filePath: real, display: path.basename(abs), rootDir: path.dirname(real) } };
  }
  const names = await listDirectory(real);
  const singles = SITE_CONFIG_NAMES.filter((n) => names.includes(n));
  const hasMulti = names.includes(MULTI_DIR) && (await statKind(path.join(real, MULTI_DIR))) === 'directory';
  // The node never follows a link on the media (media.ts copyTree): validate and plan say so as run does (the tenth
  // hostile re-test of issue 36 had them pass media that run refused).
  for (const name of [...SITE_CONFIG_NAMES.filter((n) => names.includes(n)), ...(hasMulti ? [MULTI_DIR] : [])]) {
    if (await isSymbolicLink(path.join(real, name))) return fail(`holds ${name} as a symbolic link, not a ${name === MULTI_DIR ? 'folder' : 'file'}; copy the real ${name === MULTI_DIR ? 'folder' : 'file'} onto it (links on the media are never followed)`);
  }
  if (singles.length > 1) return fail(`holds both ${singles.join(' and ')}: keep exactly one site-config`);
  if (singles.length === 1 && hasMulti) return fail(`holds both ${singles[0]} and ${MULTI_DIR}/: use one site-config, or one per machine under ${MULTI_DIR}/, not both`);
  if (singles.length === 1) {
    const file = await realPathIfExists(path.join(real, singles[0]!));
    if (file === undefined) return fail(`${singles[0]} is a dangling symbolic link`);
    if (!isInside(real, file)) return fail(`${singles[0]} is a symbolic link that resolves outside ${location}; it is not read`);
    return { kind: 'single', candidate: { filePath: file, display: singles[0]!, rootDir: real } };
  }
  if (hasMulti) {
    const dir = path.join(real, MULTI_DIR);
    const files = (await listDirectory(dir)).filter((n) => CONFIG_EXTENSIONS.some((e) => n.endsWith(e)) && !n.startsWith('.'));
    if (files.length === 0) return fail(`${MULTI_DIR}/ holds no site-config (*.yaml, *.yml or *.json)`);
    const candidates: Candidate[] = [];
    for (const n of files) {
      const file = await realPathIfExists(path.join(dir, n));
      const display = `${MULTI_DIR}/${n}`;
      // A link is still a candidate: its validation reports the problem.
      candidates.push({ filePath: file !== undefined && isInside(real, file) && !(await isSymbolicLink(path.join(dir, n))) ? file : path.join(dir, n), display, rootDir: real });
    }
    return { kind: 'multi', candidates };
  }
  // Image-based install's configuration ISO: cluster-configuration/manifest.json, confined to the whole volume
  // (its extra-manifests/ is beside cluster-configuration/).
  const seed = await realPathIfExists(path.join(real, SEED_RECONFIGURATION_FILE));
  if (seed !== undefined && isInside(real, seed)) return { kind: 'single', candidate: { filePath: seed, display: SEED_RECONFIGURATION_FILE, rootDir: real } };
  return fail(`holds no ${SITE_CONFIG_NAMES.join(', ')}, no ${MULTI_DIR}/ directory and no ${SEED_RECONFIGURATION_FILE}`);
}

async function validateCandidate(c: Candidate, trusted: TrustedKeys, now: Date, nodeKey?: NodeKey, lastIssued?: LastIssued): Promise<FileValidation> {
  if (await isSymbolicLink(c.filePath)) return { errors: [{ path: c.display, message: 'is a symbolic link, not a file; copy the real file onto it (links on the media are never followed)' }], warnings: [], matchKnown: false };
  const real = await realPathIfExists(c.filePath);
  if (real === undefined || !isInside(c.rootDir, real)) {
    return {
      errors: [{ path: c.display, message: real === undefined ? 'is a dangling symbolic link' : 'is a symbolic link that resolves outside the site-config volume; it is not read' }],
      warnings: [],
      matchKnown: false,
    };
  }
  return validateSiteConfigFile({ filePath: real, display: c.display, rootDir: c.rootDir, trusted, now, ...(nodeKey ? { nodeKey } : {}), ...(lastIssued !== undefined ? { lastIssued } : {}) });
}

export type NodeKey = NonNullable<Parameters<typeof validateSiteConfigFile>[0]['nodeKey']>;

/** This node's own key for sealed files (`prepare` made it); none is not an error until a sealed file needs it. */
async function readNodeKey(host: Host): Promise<NodeKey> {
  try {
    return { privateKeyPem: await host.readText(NODE_KEY_FILE) };
  } catch (e) {
    // Missing: no key (yet). There but unreadable (a folder, a named pipe): damaged, said as such when a sealed file needs it.
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? {} : { unreadable: whyUnreadable(e) };
  }
}

function prefixed(display: string, problems: readonly ValidationProblem[]): ValidationProblem[] {
  return problems.map((p) => ({ path: p.path.startsWith(display) ? p.path : `${display}:${p.path}`, message: p.message }));
}

function asResult(v: FileValidation, sourcePath: string): LoadResult {
  if (v.site && v.errors.length === 0) return { status: 'valid', site: v.site };
  return { status: 'invalid', errors: v.errors, warnings: v.warnings, sourcePath };
}

/** `lastIssued`: metadata.issued of the config this node applied last (src/engine/last-issued.ts). */
export async function loadSiteConfig(location: string, opts: { host: Host; now?: Date; identity?: MachineIdentity; trusted?: TrustedKeys; lastIssued?: LastIssued }): Promise<LoadResult> {
  const now = opts.now ?? new Date();
  const located = await locateSiteConfigs(location);
  if (located.kind === 'error') return { status: 'invalid', errors: [located.problem], warnings: [] };
  const trusted = opts.trusted ?? (await loadTrustedKeys(opts.host));
  // loadSiteConfig judges a config for this node (run, plan, validate --this-machine): sealed files are opened.
  const nodeKey = await readNodeKey(opts.host);
  let identity = opts.identity;
  const machine = async () => (identity ??= await readMachineIdentity(opts.host));

  if (located.kind === 'single') {
    const c = located.candidate;
    const v = await validateCandidate(c, trusted, now, nodeKey, opts.lastIssued);
    if (v.matchKnown && v.match) {
      const reasons = matchProblems(v.match, await machine());
      if (reasons.length > 0) return { status: 'not-for-this-machine', reasons: reasons.map((r) => `${c.display}: ${r}`) };
    }
    return asResult(v, c.filePath);
  }

  const results = await Promise.all(located.candidates.map(async (c) => ({ c, v: await validateCandidate(c, trusted, now, nodeKey, opts.lastIssued) })));
  const id = await machine();
  const fitting = results.filter(({ v }) => v.matchKnown && matchProblems(v.match, id).length === 0);
  const unknown = results.filter(({ v }) => !v.matchKnown);
  if (fitting.length > 1) {
    return {
      status: 'invalid',
      errors: [{ path: `${MULTI_DIR}/`, message: `${fitting.length} site-configs fit this machine (${fitting.map(({ c }) => c.display).join(', ')}): make their spec.match select one machine each` }],
      warnings: [],
    };
  }
  if (fitting.length === 1) {
    const { c, v } = fitting[0]!;
    const unreadable = unknown.map(({ c: u, v: uv }) => ({ path: u.display, message: `could not be checked for this machine and was skipped: ${uv.errors[0]?.message ?? 'unreadable'}` }));
    if (v.site && v.errors.length === 0) {
      v.site.warnings.push(...unreadable);
      return { status: 'valid', site: v.site };
    }
    return { status: 'invalid', errors: v.errors, warnings: [...v.warnings, ...unreadable], sourcePath: c.filePath };
  }
  if (unknown.length > 0) {
    // One of the unreadable files may be the one meant for this machine: report them rather than "not for this machine".
    return {
      status: 'invalid',
      errors: unknown.flatMap(({ c, v }) => prefixed(c.display, v.errors)),
      warnings: unknown.flatMap(({ c, v }) => prefixed(c.display, v.warnings)),
    };
  }
  return {
    status: 'not-for-this-machine',
    reasons: results.map(({ c, v }) => `${c.display}: ${matchProblems(v.match, id).join('; ')}`),
  };
}

export interface CandidateReport {
  display: string;
  sourcePath: string;
  errors: ValidationProblem[];
  warnings: ValidationProblem[];
  /** Neither wrong nor risky: which key verified the signature, which node a sealed file is for. */
  notes: ValidationProblem[];
  valid: boolean;
  /** spec.match when readable: the machine(s) it is for (empty: any machine). */
  match?: MachineMatch;
  /** The resolved config, when valid. */
  site?: LoadedSiteConfig;
}

/**
 * Validates every site-config at a location without machine matching: what a platform engineer preparing media
 * for many machines wants (`validate --any-machine`). A location error is a single invalid report.
 */
export async function validateEveryCandidate(location: string, opts: { host: Host; now?: Date; trusted?: TrustedKeys; nodeKey?: NodeKey }): Promise<CandidateReport[]> {
  const now = opts.now ?? new Date();
  const located = await locateSiteConfigs(location);
  if (located.kind === 'error') return [{ display: location, sourcePath: path.resolve(location), errors: [located.problem], warnings: [], notes: [], valid: false }];
  const trusted = opts.trusted ?? (await loadTrustedKeys(opts.host));
  const candidates = located.kind === 'single' ? [located.candidate] : located.candidates;
  return Promise.all(
    candidates.map(async (c) => {
      const v = await validateCandidate(c, trusted, now, opts.nodeKey);
      return { display: c.display, sourcePath: c.filePath, errors: v.errors, warnings: v.warnings, notes: v.notes ?? [], valid: v.errors.length === 0 && v.site !== undefined, ...(v.matchKnown ? { match: v.match ?? {} } : {}), ...(v.site && v.errors.length === 0 ? { site: v.site } : {}) };
    }),
  );
}
