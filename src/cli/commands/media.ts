// `sno-reconfigure media build|check` (issue 19). `check` is in every build: what a stick, an image or a folder
// holds, for which machine(s), and whether its signature verifies — `validate`'s judgement of it. `build` makes
// images for a whole inventory: it lives in dist/sno-reconfigure-workstation.cjs so the node bundle (which rides
// in a MachineConfig) does not carry it; the node bundle hands `media build` to that file when it is beside it.
import { UsageError, type Command, type ParsedArgs, type CliIo } from '../command';
import { validateCommand } from './validate';
import { handOff } from './workstation';

export type MediaBuild = (args: ParsedArgs, io: CliIo) => Promise<number>;

const HELP = `Usage: sno-reconfigure media build --inventory SITES.yaml|SITES.csv --template SITE-CONFIG.yaml --out DIR
                             [--signing-key KEY.pem] [--format fat,iso] [--multi-node] [--source-date-epoch SECONDS]
       sno-reconfigure media check IMAGE|DEVICE|DIR [--this-machine] [--trusted-key PEM]... [--json]

media build (a workstation command): one site-config per inventory row, from the template with each \${column}
replaced by the row's value; the files it names (beside the template) copied along, sealed to the node when the
row gives nodePublicKey (the key \`prepare\` printed), pinned and signed with --signing-key; each validated as the
node will; written to DIR as NAME.fat.img (FAT, label SITE-CONFIG, for \`dd\` to a USB stick) and/or NAME.iso
(ISO 9660, for BMC virtual media), with manifest.json and manifest.txt (each image's sha256 and the machine it is
for). --multi-node: one volume (sites.fat.img / sites.iso) with site-configs/NAME.yaml for every row, each
picked by the node its spec.match fits. DIR must not exist; a failed build writes nothing. The same inputs give
byte-identical images.

media check: what the stick, image or folder holds, which machine(s) each site-config is for, and — with
--trusted-key, as on a node that trusts those keys — whether its signature verifies. --this-machine also
requires a config for this machine (and opens files sealed to it).

Exit status: 0 built / valid, 1 invalid input or a failed build, 2 usage.
`;

export function mediaCommand(build?: MediaBuild): Command {
  return {
    name: 'media',
    summary: 'media build (a workstation: images for an inventory of sites) and media check (what a stick or image holds)',
    help: HELP,
    options: {
      ...validateCommand.options,
      inventory: { type: 'string' },
      template: { type: 'string' },
      out: { type: 'string' },
      'signing-key': { type: 'string' },
      format: { type: 'string' },
      'source-date-epoch': { type: 'string' },
      'multi-node': { type: 'boolean' },
    },
    async run(args, io) {
      const [verb, ...rest] = args.positionals;
      if (verb === 'check') return validateCommand.run({ ...args, positionals: rest }, io);
      if (verb !== 'build') throw new UsageError(verb ? `unknown media verb '${verb}': expected build or check` : 'expected build or check');
      if (build) return build({ ...args, positionals: rest }, io);
      return handOff(io, 'media', process.argv.slice(3));
    },
  };
}
