// `sno-reconfigure media build|check` (issue 19). `check` is in every build: what a stick, an image or a folder
// holds, for which machine(s), and whether its signature verifies — `validate`'s judgement of it. `build` makes
// images for a whole inventory: it lives in dist/sno-reconfigure-workstation.cjs so the node bundle (which rides
// in a MachineConfig) does not carry it; the node bundle hands `media build` to that file when it is beside it.
import { UsageError, stringOpt, type Command, type ParsedArgs, type CliIo } from '../command';
import { validateCommand } from './validate';
import { WORKSTATION_BUNDLE, handOff } from './workstation';
import { MEDIA_SUMMARY } from './summaries';

export type MediaBuild = (args: ParsedArgs, io: CliIo) => Promise<number>;
/** `media check --manifest`: workstation code too (a build is checked where it was made). */
export type MediaCheckManifest = MediaBuild;

const HELP = `Usage: sno-reconfigure media check IMAGE|DEVICE|DIR [--this-machine] [--trusted-key PEM]... [--json]

What the stick, image or folder holds, which machine(s) each site-config is for, and — with --trusted-key, as
on a node that trusts those keys — whether its signature verifies. --this-machine also requires a config for
this machine (and opens files sealed to it). Exit status: 0 valid, 1 invalid, 2 usage.

media build and media check --manifest are workstation commands: \`node ${WORKSTATION_BUNDLE} media --help\` tells of them.
`;

/** `help`: the workstation's, which also tells of build and check --manifest. */
export function mediaCommand(build?: MediaBuild, checkManifest?: MediaCheckManifest, help = HELP): Command {
  return {
    name: 'media',
    summary: MEDIA_SUMMARY,
    help,
    options: {
      ...validateCommand.options,
      inventory: { type: 'string' },
      template: { type: 'string' },
      out: { type: 'string' },
      'signing-key': { type: 'string' },
      format: { type: 'string' },
      'source-date-epoch': { type: 'string' },
      'multi-node': { type: 'boolean' },
      issued: { type: 'string' },
      'valid-days': { type: 'string' },
      nodes: { type: 'string' },
      manifest: { type: 'string' },
    },
    async run(args, io) {
      const [verb, ...rest] = args.positionals;
      if (verb === 'check' && stringOpt(args, 'manifest') !== undefined) return checkManifest ? checkManifest({ ...args, positionals: rest }, io) : handOff(io, 'media', process.argv.slice(3));
      if (verb === 'check') return validateCommand.run({ ...args, positionals: rest }, io);
      if (verb !== 'build') throw new UsageError(verb ? `unknown media verb '${verb}': expected build or check` : 'expected build or check');
      if (build) return build({ ...args, positionals: rest }, io);
      return handOff(io, 'media', process.argv.slice(3));
    },
  };
}
