// `sno-reconfigure validate PATH [--json] [--root DIR] [--any-machine]` (DESIGN.md section 3): validates a
// site-config file, directory or mounted volume offline. Exit 0 valid, 1 invalid or not for this machine,
// 2 usage. `--json` prints {"valid", "errors", "warnings"} (the contract) plus "status" and "source".
import * as path from 'node:path';
import { LocalHost } from '../../host/host';
import { statKind } from '../../siteconfig/files';
import { loadSiteConfig, validateEveryCandidate, type CandidateReport, type LoadResult } from '../../siteconfig/load';
import type { ValidationProblem } from '../../siteconfig/types';
import { EXIT_FAILURE, EXIT_OK, UsageError, boolOpt, stringOpt, type CliIo, type Command, type ParsedArgs } from '../command';

const HELP = `Usage: sno-reconfigure validate PATH [--json] [--root DIR] [--any-machine]

Validates a site-config offline, before it goes on the media: the file itself, every file it references
(nmstate, pull secret, trust bundle, certificates), their sha256 pins and, when the node holds trusted keys,
the signature. Every problem is listed with its location, e.g. spec.network.nmstate.interfaces[0].ipv4.address[0].ip.

PATH is a site-config file, or a directory / mounted volume holding site-config.yaml (or .yml/.json) or
site-configs/*.yaml (one per machine; the one whose spec.match fits this machine is checked).

Options:
  --json          print {"valid":bool,"status":...,"source":...,"errors":[{"path","message"}],"warnings":[...]}
  --root DIR      host root to read this machine's identity (sys/class/dmi/id, sys/class/net) and trusted
                  keys (etc/sno-reconfigure/trusted-keys/*.pem) from (default /)
  --any-machine   validate every site-config at PATH, whichever machine it is for (no spec.match check)
  --help, -h      show this help

Exit status: 0 valid, 1 invalid or not for this machine, 2 usage error.

Examples:
  sno-reconfigure validate /media/usb
  sno-reconfigure validate site-config.yaml --json
  sno-reconfigure validate ./store-media --any-machine --root ./factory-root
`;

interface JsonProblem {
  path: string;
  message: string;
}

interface JsonReport {
  valid: boolean;
  status: 'valid' | 'invalid' | 'not-for-this-machine';
  source: string;
  errors: JsonProblem[];
  warnings: JsonProblem[];
  files?: Array<{ path: string; valid: boolean; errors: JsonProblem[]; warnings: JsonProblem[] }>;
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
    files: reports.map((r) => ({ path: r.display, valid: r.valid, errors: plain(r.errors), warnings: plain(r.warnings) })),
  };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function problemLines(kind: string, problems: readonly JsonProblem[]): string[] {
  if (problems.length === 0) return [];
  return [`${kind}:`, ...problems.map((p) => `  ${p.path}: ${p.message}`)];
}

function humanReport(r: JsonReport, result: LoadResult | undefined): string {
  const lines: string[] = [];
  if (r.files) {
    for (const f of r.files) {
      lines.push(`${f.path}: ${f.valid ? 'valid' : `INVALID (${plural(f.errors.length, 'error')})`}${f.warnings.length ? `, ${plural(f.warnings.length, 'warning')}` : ''}`);
      lines.push(...problemLines('  errors', f.errors).map((l) => `  ${l}`));
      lines.push(...problemLines('  warnings', f.warnings).map((l) => `  ${l}`));
    }
    lines.push(r.valid ? `all ${plural(r.files.length, 'site-config')} valid` : `${r.files.filter((f) => !f.valid).length} of ${plural(r.files.length, 'site-config')} invalid`);
    return `${lines.join('\n')}\n`;
  }
  if (r.status === 'valid' && result?.status === 'valid') {
    const s = result.site.resolved;
    const domain = `${s.clusterName ?? '<cluster name>'}.${s.baseDomain}`;
    lines.push(`${r.source}: valid — site "${s.name}", cluster domain ${domain}${r.warnings.length ? `, ${plural(r.warnings.length, 'warning')}` : ''}`);
  } else if (r.status === 'not-for-this-machine') {
    lines.push(`${r.source}: NOT FOR THIS MACHINE — no site-config here matches this machine's identity (validating for another machine? use --any-machine)`);
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

export const validateCommand: Command = {
  name: 'validate',
  summary: 'validate a site-config file, directory or volume offline',
  help: HELP,
  options: {
    json: { type: 'boolean' },
    root: { type: 'string' },
    'any-machine': { type: 'boolean' },
  },
  async run(args, io) {
    if (args.positionals.length === 0) throw new UsageError('missing PATH: the site-config file, directory or volume to validate');
    if (args.positionals.length > 1) throw new UsageError(`expected one PATH, got ${args.positionals.length}: ${args.positionals.join(' ')}`);
    const shown = args.positionals[0]!;
    const location = path.resolve(io.cwd, shown);
    const host = new LocalHost({ root: await rootFrom(args, io), env: io.env });
    let report: JsonReport;
    let result: LoadResult | undefined;
    if (boolOpt(args, 'any-machine')) {
      report = everyCandidateReport(await validateEveryCandidate(location, { host }), shown);
    } else {
      result = await loadSiteConfig(location, { host });
      report = reportOf(result, shown);
    }
    io.out(boolOpt(args, 'json') ? `${JSON.stringify(report, null, 2)}\n` : humanReport(report, result));
    return report.valid ? EXIT_OK : EXIT_FAILURE;
  },
};
