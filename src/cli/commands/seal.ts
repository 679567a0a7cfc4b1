// `sno-reconfigure seal`: on a workstation, encrypt the files a site-config names to one node's key (the one
// `prepare` printed at the factory), so a lost stick does not leak the pull secret or a private key.
import * as path from 'node:path';
import { SealedFileError, SEALED_SUFFIX, describeSealed, sealFile } from '../../siteconfig/sealed';
import { EXIT_FAILURE, EXIT_OK, UsageError, stringOpt, type Command } from '../command';
import { hostFrom } from '../common';
import { SEAL_SUMMARY } from './summaries';

export const sealCommand: Command = {
  name: 'seal',
  summary: SEAL_SUMMARY,
  help: `Usage: sno-reconfigure seal --to NODE-KEY.pub.pem [--label NAME] [--base DIR] FILE...

Encrypts each FILE to the node whose public key is NODE-KEY.pub.pem (printed by \`sno-reconfigure prepare\`
at the factory, and kept on the node in /etc/sno-reconfigure/node-key.pub.pem), writing FILE.sealed beside it.
Only that node can open it. Then remove the clear FILE from the media: a site-config whose media holds both
is refused. The site-config keeps naming FILE (pullSecretFile: pull-secret.json); the agent finds FILE.sealed.

Options:
  --to PEM      the node's public key (X25519)
  --label NAME  a name for the node, shown by \`validate\` (e.g. the site or serial number)
  --base DIR    the folder of the site-config that names the files (default: the current folder): each
                file is sealed under its path relative to it, as the site-config writes it
Pin the sealed file, not the clear one, in spec.sha256 (the pin covers the bytes on the media).

Exit status: 0 sealed, 1 a file or the key could not be used, 2 usage.
`,
  options: { to: { type: 'string' }, label: { type: 'string' }, base: { type: 'string' } },
  async run(args, io) {
    const to = stringOpt(args, 'to');
    if (!to) throw new UsageError('needs --to NODE-KEY.pub.pem');
    if (args.positionals.length === 0) throw new UsageError('names no FILE to seal');
    const host = hostFrom(args, io);
    const base = path.resolve(stringOpt(args, 'base') ?? '.');
    const label = stringOpt(args, 'label');
    let publicKeyPem: string;
    try {
      publicKeyPem = await host.readText(path.resolve(to));
    } catch (e) {
      io.err(`sno-reconfigure seal: cannot read the node key ${to} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`);
      return EXIT_FAILURE;
    }
    for (const file of args.positionals) {
      const abs = path.resolve(file);
      const rel = path.relative(base, abs).split(path.sep).join('/');
      if (rel.startsWith('../')) {
        io.err(`sno-reconfigure seal: ${file} is not inside ${base}; give --base the site-config's folder\n`);
        return EXIT_FAILURE;
      }
      try {
        const sealed = sealFile(await host.readFile(abs), rel, publicKeyPem, label);
        await host.writeFileAtomic(`${abs}${SEALED_SUFFIX}`, sealed, 0o644);
        io.out(`${file}${SEALED_SUFFIX}: sealed as ${rel} for node ${describeSealed(sealed).recipient}${label ? ` (${label})` : ''}; remove ${file} from the media\n`);
      } catch (e) {
        const reason = e instanceof SealedFileError ? e.message : ((e as NodeJS.ErrnoException).code ?? (e as Error).message);
        io.err(`sno-reconfigure seal: ${file}: ${reason}\n`);
        return EXIT_FAILURE;
      }
    }
    return EXIT_OK;
  },
};
