// What the fuzz tests share: the valid corpus prepared once per case (pins and signatures made, the
// machine identity in a host root), its files in memory for the mutator, writing a mutant onto the
// case's media directory and putting the original back, and the checks every validation outcome must pass.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { listCases, prepareCase, type PreparedCase } from '../../unit/siteconfig/corpus';
import type { ToolCall } from '../../support/standin-host';
import type { CaseFiles, Mutant } from './fuzz-mutations';

/** The fixed seed of every fuzz run (change it to explore; failures print the mutant's description). */
export const FUZZ_SEED = 0x5e0c0f16;

export interface FuzzCase extends CaseFiles {
  prepared: PreparedCase;
  /** The media directory the mutants are written to. */
  dir: string;
  /** Values in the case that are secrets (pull-secret auths, private key bodies): never echoed back. */
  secrets: string[];
}

async function walk(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await walk(dir, r)));
    else if (e.isFile()) out.push(r);
  }
  return out.sort();
}

// Image-based install media: manifest.json and the JSON files of its manifests/ are documents a person (or a
// tool) writes, so they are mutated structurally like a site-config.
const SITE_CONFIG = /^(site-config\.(ya?ml|json)|site-configs\/[^/]+\.(ya?ml|json)|cluster-configuration\/manifest\.json|cluster-configuration\/manifests\/[^/]+\.json)$/;

function secretsIn(files: Map<string, Buffer>): string[] {
  const found = new Set<string>();
  for (const bytes of files.values()) {
    const text = bytes.toString('utf8');
    for (const m of text.matchAll(/"?auth"?\s*:\s*"?([A-Za-z0-9+/=]{12,})"?/g)) found.add(m[1]!);
    for (const m of text.matchAll(/-----BEGIN [A-Z ]*PRIVATE KEY-----\s*([A-Za-z0-9+/=]{16})/g)) found.add(m[1]!);
    for (const m of text.matchAll(/"?password"?\s*:\s*"?([^\s",}]{6,})"?/g)) found.add(m[1]!);
  }
  return [...found];
}

/** Every valid corpus case (or those `only` keeps), prepared in a temp directory. */
export async function loadValidCases(only: (name: string) => boolean = () => true): Promise<FuzzCase[]> {
  const cases: FuzzCase[] = [];
  for (const name of listCases('valid').filter(only)) {
    const prepared = await prepareCase('valid', name);
    const isFile = (await fs.stat(prepared.location)).isFile();
    const dir = isFile ? path.dirname(prepared.location) : prepared.location;
    const files = new Map<string, Buffer>();
    for (const rel of await walk(dir)) files.set(rel, await fs.readFile(path.join(dir, rel)));
    const mains = isFile ? [path.basename(prepared.location)] : [...files.keys()].filter((f) => SITE_CONFIG.test(f));
    if (mains.length === 0) throw new Error(`valid case ${name}: no site-config document found in ${dir}`);
    cases.push({ name, mains, files, prepared, dir, secrets: secretsIn(files) });
  }
  return cases;
}

/** Writes the mutant's changed files onto the case's directory; returns what to put back. */
export async function writeMutant(c: FuzzCase, m: Mutant): Promise<() => Promise<void>> {
  const changed = [...m.files].filter(([rel, bytes]) => !c.files.get(rel)!.equals(bytes));
  for (const [rel, bytes] of changed) await fs.writeFile(path.join(c.dir, rel), bytes);
  return async () => {
    for (const [rel] of changed) await fs.writeFile(path.join(c.dir, rel), c.files.get(rel)!);
  };
}

/** Files that differ from `expected` (changed, deleted or added) in the case's directory: validation must touch nothing. */
export async function mediaChanges(c: FuzzCase, expected: Map<string, Buffer>): Promise<string[]> {
  const now = await walk(c.dir);
  const diffs: string[] = [];
  for (const rel of now) {
    const want = expected.get(rel);
    if (!want) diffs.push(`added ${rel}`);
    else if (!(await fs.readFile(path.join(c.dir, rel))).equals(want)) diffs.push(`changed ${rel}`);
  }
  for (const rel of expected.keys()) if (!now.includes(rel)) diffs.push(`deleted ${rel}`);
  return diffs;
}

/** What a fuzz run counts: mutants that survived, that changed their media, that were judged invalid, and each failure. */
export class MutantTally {
  survived = 0;
  dataLost = 0;
  invalid = 0;
  readonly failures: string[] = [];

  /** One mutant judged: the problems found so far, plus any change to its media (`c`'s directory); its exit code. */
  async record(c: FuzzCase, m: Mutant, code: number | null, problems: string[]): Promise<void> {
    const touched = await mediaChanges(c, m.files);
    if (touched.length > 0) {
      this.dataLost += 1;
      problems.push(`validate changed the media: ${touched.join(', ')}`);
    }
    if (code === 1) this.invalid += 1;
    if (problems.length === 0) this.survived += 1;
    else this.failures.push(`${m.description}: ${problems.join(' | ')}`);
  }
}

export interface ValidateOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * What must hold for every `validate --json` answer: exit 0 or 1, a JSON report of the contract's shape
 * whose `valid` agrees with the exit code, at least one located error when invalid, no secret echoed.
 * Returns the problems (empty when all is well).
 */
export function validateContractProblems(o: ValidateOutcome, secrets: string[], checkSecrets: boolean): string[] {
  const problems: string[] = [];
  if (o.code !== 0 && o.code !== 1) problems.push(`exit code ${o.code} (expected 0 or 1); stderr: ${o.stderr.slice(0, 600)}`);
  if (/internal error/i.test(o.stderr) || /internal error/i.test(o.stdout)) problems.push(`internal error: ${(o.stderr || o.stdout).slice(0, 800)}`);
  let report: { valid?: unknown; errors?: unknown; warnings?: unknown };
  try {
    report = JSON.parse(o.stdout) as typeof report;
  } catch {
    problems.push(`stdout is not the --json report: ${JSON.stringify(o.stdout.slice(0, 300))}; stderr: ${o.stderr.slice(0, 300)}`);
    return problems;
  }
  const list = (v: unknown) => Array.isArray(v) && v.every((p) => p && typeof p === 'object' && typeof (p as { path: unknown }).path === 'string' && typeof (p as { message: unknown }).message === 'string' && (p as { message: string }).message.length > 0);
  if (typeof report.valid !== 'boolean') problems.push('report.valid is not a boolean');
  if (!list(report.errors) || !list(report.warnings)) problems.push('report.errors / report.warnings are not [{path, message}] lists');
  if (report.valid !== (o.code === 0)) problems.push(`report.valid=${String(report.valid)} but exit code ${o.code}`);
  const errors = (Array.isArray(report.errors) ? report.errors : []) as { path: string; message: string }[];
  if (report.valid === false && errors.length === 0) problems.push('invalid without a single error message');
  if (checkSecrets) {
    for (const p of [...errors, ...((Array.isArray(report.warnings) ? report.warnings : []) as { path: string; message: string }[])]) {
      for (const s of secrets) if (p.message.includes(s) || p.path.includes(s)) problems.push(`a message leaks secret material: ${p.path}: ${p.message.slice(0, 200)}`);
    }
  }
  return problems;
}

/** Tool calls that change the node: the only nmstatectl verb allowed is `show`, systemctl may only ask. */
export function stateChangingCalls(calls: ToolCall[]): ToolCall[] {
  return calls.filter((c) => {
    if (c.tool === 'nmstatectl') return c.args[0] !== 'show';
    if (c.tool === 'systemctl') return !['is-enabled', 'is-active', 'is-failed', 'is-system-running', 'show', 'status', 'cat', 'list-units'].includes(c.args[0] ?? '');
    return false;
  });
}
