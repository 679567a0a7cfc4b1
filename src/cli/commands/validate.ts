// `sno-reconfigure validate PATH [--json] [--root DIR] [--any-machine]` (DESIGN.md section 3): validates a
// site-config file, directory or mounted volume offline. Exit 0 valid, 1 invalid or not for this machine,
// 2 usage. `--json` prints {"valid", "errors", "warnings"} (the contract) plus "status" and "source".
import { screenLine } from '../../util/screen-text';
import * as path from 'node:path';
import { LocalHost } from '../../host/host';
import { readRegularFile, statKind } from '../../siteconfig/files';
import { extractImage, readImageKind } from '../../siteconfig/image';
import { loadSiteConfig, validateEveryCandidate, type CandidateReport, type LoadResult } from '../../siteconfig/load';
import { trustedKeysFrom, type TrustedKeys } from '../../siteconfig/signature';
import type { MachineMatch, ValidationProblem } from '../../siteconfig/types';
import { EXIT_FAILURE, EXIT_OK, UsageError, boolOpt, listOpt, stringOpt, type CliIo, type Command, type ParsedArgs } from '../command';
import { VALIDATE_SUMMARY } from './summaries';

const HELP = `Usage: sno-reconfigure validate PATH [--json] [--this-machine] [--trusted-key PEM]... [--root DIR]

Validates a site-config offline, before it goes on the media: the file itself, every file it references
(nmstate, pull secret, trust bundle, certificates), their sha256 pins and the signature. Every problem is
listed with its location, e.g. spec.network.nmstate.interfaces[0].ipv4.address[0].ip.

PATH is a site-config file, a directory / mounted volume holding site-config.yaml (or .yml/.json) or
site-configs/*.yaml (one per machine), or a FAT (USB stick) or ISO 9660 (virtual media) image file of such a
volume — read with mcopy (package mtools) or xorriso, nothing is mounted. Every site-config found is judged on its content, and the output
says which machine(s) each one is for (its spec.match). A file on the host seen from the podman runtime is
under /host (e.g. validate /host/root/site-config.yaml).

Options:
  --json               print {"valid":bool,"status":...,"source":...,"errors":[{"path","message"}],"warnings":[...],"files":[...]}
  --this-machine       also require a site-config meant for this machine (its spec.match against this machine's
                       identity under --root), as run and plan do
  --trusted-key PEM    a public key (Ed25519 or ECDSA P-256, PEM) the node will trust; repeatable. With it a
                       missing or non-verifying signature is an error, as on a node that holds these keys
  --root DIR           host root to read this machine's identity (sys/class/dmi/id, sys/class/net) and, without
                       --trusted-key, the trusted keys (etc/sno-reconfigure/trusted-keys/*.pem) from (default /)
  --help, -h           show this help

Exit status: 0 valid, 1 invalid (or, with --this-machine, not for this machine), 2 usage error.

Examples:
  sno-reconfigure validate /media/usb
  sno-reconfigure validate site-config.yaml --json
  sno-reconfigure validate ./store-media --trusted-key org-signing.pub.pem
  sno-reconfigure validate /run/media/site-config --this-machine
`;

interface JsonProblem {
  path: string;
  message: string;
}

interface JsonReport {
  valid: boolean;
  /** Which machine(s) the site-config is for (a single config judged on its content). */
  for?: string;
  status: 'valid' | 'invalid' | 'not-for-this-machine';
  source: string;
  errors: JsonProblem[];
  warnings: JsonProblem[];
  /** Neither wrong nor risky: the key that verified the signature, the node a sealed file is for. */
  notes?: JsonProblem[];
  files?: Array<{ path: string; valid: boolean; for?: string; errors: JsonProblem[]; warnings: JsonProblem[]; notes: JsonProblem[] }>;
}

const MATCH_WORDS: Record<keyof MachineMatch, string> = { systemUUID: 'system UUID', serialNumber: 'serial number', macAddress: 'MAC address' };

/** Which machine(s) a site-config is for, from its spec.match. */
export function machinesOf(match: MachineMatch | undefined): string | undefined {
  if (!match) return undefined;
  const parts = (Object.keys(MATCH_WORDS) as (keyof MachineMatch)[]).filter((k) => match[k]).map((k) => `${MATCH_WORDS[k]} ${match[k]}`);
  return parts.length ? `the machine with ${parts.join(' and ')}` : 'any machine (no spec.match)';
}

function plain(problems: readonly ValidationProblem[]): JsonProblem[] {
  return problems.map((p) => ({ path: p.path, message: p.message }));
}

function reportOf(result: LoadResult, shown: string): JsonReport {
  switch (result.status) {
    case 'valid':
      return { valid: true, status: 'valid', source: result.site.sourcePath, errors: [], warnings: plain(result.site.warnings) };
    case 'invalid':
      return { valid: false, status: 'invalid', source: result.sourcePath ?? shown, errors: plain(result.errors), warnings: plain(result.warnings) };
    case 'not-for-this-machine':
      return {
        valid: false,
        status: 'not-for-this-machine',
        source: shown,
        errors: result.reasons.map((r) => {
          const sep = r.indexOf(': ');
          return sep > 0 ? { path: r.slice(0, sep), message: `not for this machine: ${r.slice(sep + 2)}` } : { path: shown, message: `not for this machine: ${r}` };
        }),
        warnings: [],
      };
  }
}

function everyCandidateReport(reports: CandidateReport[], shown: string): JsonReport {
  const qualify = (display: string, problems: readonly ValidationProblem[]) =>
    problems.map((p) => ({ path: reports.length > 1 && !p.path.startsWith(display) ? `${display}:${p.path}` : p.path, message: p.message }));
  const valid = reports.every((r) => r.valid);
  return {
    valid,
    status: valid ? 'valid' : 'invalid',
    source: shown,
    errors: reports.flatMap((r) => qualify(r.display, r.errors)),
    warnings: reports.flatMap((r) => qualify(r.display, r.warnings)),
    notes: reports.flatMap((r) => qualify(r.display, r.notes)),
    files: reports.map((r) => ({ path: r.display, valid: r.valid, ...(machinesOf(r.match) ? { for: machinesOf(r.match) } : {}), errors: plain(r.errors), warnings: plain(r.warnings), notes: plain(r.notes) })),
  };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function problemLines(kind: string, problems: readonly JsonProblem[]): string[] {
  if (problems.length === 0) return [];
  // A path or message may quote a key from the file: one line each, whatever it holds (src/util/screen-text.ts).
  return [`${kind}:`, ...problems.map((p) => `  ${screenLine(`${p.path}: ${p.message}`)}`)];
}

function humanReport(r: JsonReport, result: LoadResult | undefined): string {
  const lines: string[] = [];
  if (r.files) {
    for (const f of r.files) {
      lines.push(`${f.path}: ${f.valid ? 'valid' : `INVALID (${plural(f.errors.length, 'error')})`}${f.warnings.length ? `, ${plural(f.warnings.length, 'warning')}` : ''}${f.for ? ` — for ${f.for}` : ''}`);
      lines.push(...problemLines('  errors', f.errors).map((l) => `  ${l}`));
      lines.push(...problemLines('  warnings', f.warnings).map((l) => `  ${l}`));
      lines.push(...problemLines('  notes', f.notes).map((l) => `  ${l}`));
    }
    lines.push(r.valid ? `all ${plural(r.files.length, 'site-config')} valid` : `${r.files.filter((f) => !f.valid).length} of ${plural(r.files.length, 'site-config')} invalid`);
    return `${lines.join('\n')}\n`;
  }
  if (r.status === 'valid' && result?.status === 'valid') {
    const s = result.site.resolved;
    const domain = `${s.clusterName ?? '<cluster name>'}.${s.baseDomain}`;
    lines.push(`${r.source}: valid — site "${s.name}", cluster domain ${domain}${r.warnings.length ? `, ${plural(r.warnings.length, 'warning')}` : ''}`);
  } else if (r.status === 'not-for-this-machine') {
    lines.push(`${r.source}: NOT FOR THIS MACHINE — no site-config here matches this machine's identity (checking media for another machine? leave out --this-machine)`);
  } else {
    lines.push(`${r.source}: INVALID — ${plural(r.errors.length, 'error')}${r.warnings.length ? `, ${plural(r.warnings.length, 'warning')}` : ''}`);
  }
  lines.push(...problemLines('errors', r.errors), ...problemLines('warnings', r.warnings));
  return `${lines.join('\n')}\n`;
}

async function rootFrom(args: ParsedArgs, io: CliIo): Promise<string> {
  const root = stringOpt(args, 'root');
  if (root === undefined) return '/';
  const abs = path.resolve(io.cwd, root);
  if ((await statKind(abs)) !== 'directory') throw new UsageError(`--root ${root}: no such directory`);
  return abs;
}

/** A single site-config judged on its content: the one-line verdict with the machine(s) it is for. */
function singleReport(report: CandidateReport, shown: string): { json: JsonReport; text: string } {
  const forWhom = machinesOf(report.match);
  const json: JsonReport = { valid: report.valid, ...(forWhom ? { for: forWhom } : {}), status: report.valid ? 'valid' : 'invalid', source: report.sourcePath, errors: plain(report.errors), warnings: plain(report.warnings), notes: plain(report.notes) };
  if (!report.valid || !report.site) return { json, text: humanReport({ ...json, source: report.sourcePath || shown }, undefined) };
  const s = report.site.resolved;
  const head = `${report.sourcePath}: valid — site "${s.name}", cluster domain ${s.clusterName ?? '<cluster name>'}.${s.baseDomain}${forWhom ? `, for ${forWhom}` : ''}${json.warnings.length ? `, ${plural(json.warnings.length, 'warning')}` : ''}`;
  return { json, text: `${[head, ...problemLines('warnings', json.warnings), ...problemLines('notes', report.notes)].join('\n')}\n` };
}

export async function trustedKeysFromArgs(args: ParsedArgs, io: CliIo): Promise<TrustedKeys | undefined> {
  const files = listOpt(args, 'trusted-key');
  if (files.length === 0) return undefined;
  const read = await Promise.all(
    files.map(async (f) => {
      try {
        const read = await readRegularFile(path.resolve(io.cwd, f), '');
        if (read.ok) return { file: f, pem: read.bytes.toString('utf8') };
        throw new UsageError(`--trusted-key ${f}: ${read.message}`);
      } catch (e) {
        if (e instanceof UsageError) throw e;
        throw new UsageError(`--trusted-key ${f}: cannot be read`);
      }
    }),
  );
  return trustedKeysFrom(read);
}

export const validateCommand: Command = {
  name: 'validate',
  summary: VALIDATE_SUMMARY,
  help: HELP,
  options: {
    json: { type: 'boolean' },
    root: { type: 'string' },
    'this-machine': { type: 'boolean' },
    'trusted-key': { type: 'string', multiple: true },
    // Before --this-machine existed, judging the files alone needed this flag; it is what validate does now.
    'any-machine': { type: 'boolean' },
  },
  async run(args, io) {
    if (args.positionals.length === 0) throw new UsageError('missing PATH: the site-config file, directory or volume to validate');
    if (args.positionals.length > 1) throw new UsageError(`expected one PATH, got ${args.positionals.length}: ${args.positionals.join(' ')}`);
    const shown = args.positionals[0]!;
    const host = new LocalHost({ root: await rootFrom(args, io), env: io.env });
    const image = await imageAt(host, path.resolve(io.cwd, shown));
    if (image instanceof Error) {
      io.err(`sno-reconfigure validate: ${image.message}\n`);
      return EXIT_FAILURE;
    }
    try {
      return await validateAt(image?.dir ?? path.resolve(io.cwd, shown), shown, host, args, io, image ? `${shown}:` : undefined);
    } finally {
      await image?.remove();
    }
  },
};

/** A FAT or ISO image at `file`, copied out; undefined for anything else (a folder, a site-config file). */
export async function imageAt(host: LocalHost, file: string): Promise<{ dir: string; remove: () => Promise<void> } | Error | undefined> {
  const kind = await statKind(file);
  if (kind !== 'file' && kind !== 'other') return undefined;
  const found = await readImageKind(file).catch(() => undefined);
  if (!found) return undefined;
  return extractImage(host, file, found.kind, found.size).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
}

/** `imageName`: the image the files at `location` were copied out of; messages name it instead of the copy. */
async function validateAt(location: string, shown: string, host: LocalHost, args: ParsedArgs, io: CliIo, imageName?: string): Promise<number> {
  const trusted = await trustedKeysFromArgs(args, io);
  if (boolOpt(args, 'this-machine') && boolOpt(args, 'any-machine')) throw new UsageError('--this-machine and --any-machine contradict each other');
  let report: JsonReport;
  let text: string;
  if (boolOpt(args, 'this-machine')) {
    const result = await loadSiteConfig(location, { host, ...(trusted ? { trusted } : {}) });
    report = reportOf(result, shown);
    text = humanReport(report, result);
  } else {
    const reports = await validateEveryCandidate(location, { host, ...(trusted ? { trusted } : {}) });
    const single = reports.length === 1 && !reports[0]!.display.includes('/') ? singleReport(reports[0]!, shown) : undefined;
    report = single?.json ?? everyCandidateReport(reports, shown);
    text = single?.text ?? humanReport(report, undefined);
  }
  const out = boolOpt(args, 'json') ? `${JSON.stringify(report, null, 2)}\n` : text;
  io.out(imageName ? out.split(`${location}/`).join(imageName).split(location).join(imageName) : out);
  return report.valid ? EXIT_OK : EXIT_FAILURE;
}
