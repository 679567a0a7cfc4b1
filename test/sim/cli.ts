// Runs the cluster simulator as its own process (the systemd end-to-end test's kubelet.service stand-in,
// the demo):
//   tsx test/sim/cli.ts --dir DIR [--time-scale X] [--kubelet-started] [--json-options FILE]
// DIR holds everything and persists the cluster: run it again on the same DIR after a kill and the cluster
// continues like a rebooted node. When ready it prints ONE JSON line (apiUrl, caFile, kubeconfigs,
// controlUrl, endpoints, dir) on stdout; simulator log lines go to stderr. SIGTERM/SIGINT stop it cleanly.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startSimulator, type SimulatorOptions } from './index';

const USAGE = 'usage: tsx test/sim/cli.ts --dir DIR [--time-scale X] [--kubelet-started] [--json-options FILE] [--quiet]';

interface CliArgs {
  dir: string;
  timeScale?: number;
  kubeletStarted: boolean;
  jsonOptions?: string;
  quiet: boolean;
}

function parseArgs(argv: string[]): CliArgs {
  const out: Partial<CliArgs> & { kubeletStarted: boolean; quiet: boolean } = { kubeletStarted: false, quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a}: expected a value\n${USAGE}`);
      return v;
    };
    if (a === '--dir') out.dir = value();
    else if (a === '--time-scale') {
      const v = Number(value());
      if (!(v > 0)) throw new Error(`--time-scale: expected a positive number\n${USAGE}`);
      out.timeScale = v;
    } else if (a === '--kubelet-started') out.kubeletStarted = true;
    else if (a === '--json-options') out.jsonOptions = value();
    else if (a === '--quiet') out.quiet = true;
    else if (a === '--help' || a === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else throw new Error(`unknown argument ${JSON.stringify(a)}\n${USAGE}`);
  }
  if (!out.dir) throw new Error(`--dir is required\n${USAGE}`);
  return out as CliArgs;
}

async function main(): Promise<void> {
  let args: CliArgs;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(2);
  }
  const dir = resolve(args.dir);
  let fileOptions: SimulatorOptions = {};
  if (args.jsonOptions) {
    try {
      fileOptions = JSON.parse(readFileSync(args.jsonOptions, 'utf8')) as SimulatorOptions;
    } catch (e) {
      process.stderr.write(`--json-options ${args.jsonOptions}: ${(e as Error).message}\n`);
      process.exit(2);
    }
  }
  const sim = await startSimulator({
    ...fileOptions,
    dir,
    stateDir: fileOptions.stateDir ?? join(dir, 'state'),
    ...(args.timeScale !== undefined ? { timeScale: args.timeScale } : {}),
    ...(args.kubeletStarted ? { kubelet: 'started' as const } : {}),
  });
  if (!args.quiet) sim.events.on('log', (line: string) => process.stderr.write(`${line}\n`));
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`simulator: ${signal}, stopping\n`);
    sim.stop().then(
      () => process.exit(0),
      (e: Error) => {
        process.stderr.write(`simulator: stop failed: ${e.message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.stdout.write(
    `${JSON.stringify({
      apiUrl: sim.apiUrl,
      caFile: sim.caFile,
      kubeconfigs: sim.kubeconfigs,
      controlUrl: sim.controlUrl,
      endpoints: sim.endpoints,
      dir: sim.dir,
      stateDir: sim.options.stateDir,
      clusterName: sim.options.clusterName,
      baseDomain: sim.options.baseDomain,
      nodeName: sim.options.nodeName,
      version: sim.options.version,
      timeScale: sim.options.timeScale,
    })}\n`,
  );
}

main().catch((e: Error) => {
  process.stderr.write(`simulator: ${e.stack ?? e.message}\n`);
  process.exit(1);
});
