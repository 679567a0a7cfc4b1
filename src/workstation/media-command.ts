// `media build`'s options to buildMedia, and its report for people.
import * as path from 'node:path';
import { EXIT_FAILURE, EXIT_OK, UsageError, boolOpt, stringOpt, type CliIo, type ParsedArgs } from '../cli/command';
import { LocalHost } from '../host/host';
import { BuildError, buildMedia } from './media-build';

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
  const host = new LocalHost({ root: '/', env: io.env });
  const at = (p: string) => path.resolve(io.cwd, p);
  try {
    const keyFile = stringOpt(args, 'signing-key');
    const manifest = await buildMedia({
      host,
      inventoryPath: at(inventory),
      templatePath: at(template),
      outDir: at(out),
      ...(keyFile ? { signingKeyPem: (await host.readFile(at(keyFile))).toString('utf8') } : {}),
      formats: formats as ('fat' | 'iso')[],
      multiNode: boolOpt(args, 'multi-node'),
      epoch,
      progress: (line) => io.out(`${line}\n`),
    });
    io.out(`${manifest.length} site(s), ${manifest.reduce((n, e) => n + e.images.length, 0)} image(s) in ${out}; sha256 and the machine each is for: ${path.join(out, 'manifest.txt')}\n`);
    return EXIT_OK;
  } catch (e) {
    if (!(e instanceof BuildError) && !(e as NodeJS.ErrnoException).code) throw e;
    io.err(`sno-reconfigure media build: ${(e as Error).message}; nothing was written\n`);
    return EXIT_FAILURE;
  }
}
