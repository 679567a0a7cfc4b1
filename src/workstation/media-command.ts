// `media build`'s options to buildMedia, and its report for people; `media check --manifest`, a whole build
// checked in one command.
import * as path from 'node:path';
import { EXIT_FAILURE, EXIT_OK, UsageError, boolOpt, stringOpt, type CliIo, type ParsedArgs } from '../cli/command';
import { LocalHost } from '../host/host';
import { trustedKeysFromArgs } from '../cli/commands/validate';
import { BuildError, buildMedia, imagesOf } from './media-build';
import { checkImage, checkLine, parseManifest, type ImageCheck } from './media-check';

/** 2020-01-01: the images' timestamps when --source-date-epoch and $SOURCE_DATE_EPOCH are not given. */
const DEFAULT_EPOCH = 1_577_836_800;

export async function mediaBuild(args: ParsedArgs, io: CliIo): Promise<number> {
  const inventory = stringOpt(args, 'inventory');
  const template = stringOpt(args, 'template');
  const out = stringOpt(args, 'out');
  if (!inventory || !template || !out) throw new UsageError('media build needs --inventory, --template and --out');
  const formats = (stringOpt(args, 'format') ?? 'fat,iso').split(',').map((f) => f.trim());
  for (const f of formats) if (f !== 'fat' && f !== 'iso') throw new UsageError(`--format ${f}: expected fat, iso or fat,iso`);
  const epochText = stringOpt(args, 'source-date-epoch') ?? io.env.SOURCE_DATE_EPOCH;
  const epoch = epochText === undefined ? DEFAULT_EPOCH : Number(epochText);
  if (!Number.isInteger(epoch) || epoch < 315_532_800) throw new UsageError(`--source-date-epoch ${epochText}: expected seconds since 1970, from 1980 on (FAT keeps no earlier date)`);
  const issuedText = stringOpt(args, 'issued');
  const issued = issuedText !== undefined ? new Date(issuedText) : epochText !== undefined ? new Date(epoch * 1000) : new Date();
  if (issuedText !== undefined && (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(issuedText) || Number.isNaN(issued.getTime()))) throw new UsageError(`--issued ${issuedText}: expected an RFC 3339 date and time like 2026-11-27T09:00:00Z`);
  const daysText = stringOpt(args, 'valid-days');
  const validDays = daysText === undefined ? undefined : Number(daysText);
  if (validDays !== undefined && (!Number.isInteger(validDays) || validDays < 0 || validDays > 3650)) throw new UsageError(`--valid-days ${daysText}: expected whole days from 0 (never expires) to 3650`);
  const host = new LocalHost({ root: '/', env: io.env });
  const at = (p: string) => path.resolve(io.cwd, p);
  try {
    const keyFile = stringOpt(args, 'signing-key');
    const nodes = stringOpt(args, 'nodes');
    const manifest = await buildMedia({
      host,
      inventoryPath: at(inventory),
      ...(nodes ? { nodesPath: at(nodes) } : {}),
      templatePath: at(template),
      outDir: at(out),
      ...(keyFile ? { signingKeyPem: (await host.readFile(at(keyFile))).toString('utf8') } : {}),
      formats: formats as ('fat' | 'iso')[],
      multiNode: boolOpt(args, 'multi-node'),
      epoch,
      issued,
      ...(validDays !== undefined ? { validDays } : {}),
    });
    // Nothing is said per site until the build is in place: a failed build has shown no site as done.
    const images = imagesOf(manifest);
    if (boolOpt(args, 'multi-node')) io.out(`${manifest.sites.length} site-configs on one volume: ${images.map((i) => i.file).join(', ')}\n`);
    else for (const e of manifest.sites) io.out(`${e.site}: ${e.images.map((i) => i.file).join(', ')}\n`);
    io.out(`${manifest.sites.length} site(s), ${images.length} image(s) in ${out}; sha256 and the machine each is for: ${path.join(out, 'manifest.txt')}; check them all with: sno-reconfigure media check --manifest ${path.join(out, 'manifest.json')} --trusted-key SIGNING.pub.pem\n`);
    if (!keyFile) io.err('sno-reconfigure media build: warning: these media are unsigned (no --signing-key): a node that trusts a signing key refuses them, and nothing shows that they came from you\n');
    return EXIT_OK;
  } catch (e) {
    if (!(e instanceof BuildError) && !(e as NodeJS.ErrnoException).code) throw e;
    io.err(`sno-reconfigure media build: ${(e as Error).message.trimEnd()}\nNothing was written.\n`);
    return EXIT_FAILURE;
  }
}

/** `media check --manifest DIR/manifest.json`: every image of a build, one line each (src/workstation/media-check.ts). */
export async function mediaCheckManifest(args: ParsedArgs, io: CliIo): Promise<number> {
  const file = path.resolve(io.cwd, stringOpt(args, 'manifest') ?? '');
  if (args.positionals.length > 0) throw new UsageError(`--manifest checks the images it lists: give no IMAGE (got ${args.positionals.join(' ')})`);
  const host = new LocalHost({ root: '/', env: io.env });
  let manifest;
  try {
    manifest = parseManifest((await host.readFile(file)).toString('utf8'), stringOpt(args, 'manifest')!);
  } catch (e) {
    io.err(`sno-reconfigure media check: ${(e as NodeJS.ErrnoException).code ? `cannot read ${stringOpt(args, 'manifest')!}` : (e as Error).message}\n`);
    return EXIT_FAILURE;
  }
  const trusted = await trustedKeysFromArgs(args, io);
  const signedBy = manifest.sites.find((s) => s.signedBy && s.signedBy !== 'unsigned')?.signedBy;
  if (signedBy && !trusted) throw new UsageError(`this build is signed with ${signedBy}: give --trusted-key with its public half, as the nodes hold it, to check the signatures`);
  const images = imagesOf(manifest);
  const checks: ImageCheck[] = [];
  // Four at a time: each image is copied out by mcopy or xorriso.
  for (let i = 0; i < images.length; i += 4) {
    checks.push(...(await Promise.all(images.slice(i, i + 4).map((img) => checkImage(host, path.dirname(file), img, manifest.sites.filter((s) => s.images.some((x) => x.file === img.file)), trusted)))));
  }
  const good = checks.filter((c) => c.ok).length;
  if (boolOpt(args, 'json')) io.out(`${JSON.stringify({ valid: good === checks.length, images: checks }, null, 2)}\n`);
  else io.out(`${[...checks.map((c) => checkLine(c, trusted !== undefined)), `${good} of ${checks.length} image(s) good${good === checks.length ? '' : `; ${checks.length - good} FAILED`}`].join('\n')}\n`);
  return good === checks.length ? EXIT_OK : EXIT_FAILURE;
}
