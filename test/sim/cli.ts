// Runs the cluster simulator as its own process (the systemd end-to-end test's kubelet.service stand-in,
// the demo):
//   tsx test/sim/cli.ts --dir DIR [--time-scale X] [--kubelet-started] [--json-options FILE]
//                       [--kubelet-ips IP,...] [--ingress-listen HOST:PORT] [--notify] [--quiet]
// DIR holds everything and persists the cluster: run it again on the same DIR after a kill and the cluster
// continues like a rebooted node. When ready it prints ONE JSON line (apiUrl, caFile, kubeconfigs,
// controlUrl, endpoints, dir) on stdout; simulator log lines go to stderr. SIGTERM/SIGINT stop it cleanly.
// For the systemd end-to-end test, where this process is kubelet.service on the node:
// - --kubelet-ips: the addresses kubelet reports (its serving CSR carries them), e.g. the node's addresses
//   at this boot; overrides the options file;
// - --ingress-listen: also accept the router's connections on HOST:PORT (the SNO router binds the host's
//   443) and pass them, bytes untouched (TLS and SNI end at the simulator), to the ingress endpoint;
// - --notify: READY=1 through the host's /usr/bin/systemd-notify once serving (a Type=notify unit with
//   NotifyAccess=all, since systemd-notify is a child process).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createConnection, createServer, isIP, type Server, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { startSimulator, type SimulatorOptions } from './index';

const USAGE =
  'usage: tsx test/sim/cli.ts --dir DIR [--time-scale X] [--kubelet-started] [--json-options FILE] [--kubelet-ips IP,...] [--ingress-listen HOST:PORT] [--notify] [--quiet]';

interface CliArgs {
  dir: string;
  timeScale?: number;
  kubeletStarted: boolean;
  jsonOptions?: string;
  kubeletIPs?: string[];
  ingressListen?: { host: string; port: number };
  notify: boolean;
  quiet: boolean;
}

function parseListen(text: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(text);
  const port = Number(m?.[2]);
  if (!m || !(port >= 1 && port <= 65535)) throw new Error(`--ingress-listen: expected HOST:PORT (e.g. 127.0.0.1:443), got ${JSON.stringify(text)}\n${USAGE}`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

function parseIps(text: string): string[] | undefined {
  const ips = text.split(',').map((s) => s.trim()).filter(Boolean);
  for (const ip of ips) if (!isIP(ip)) throw new Error(`--kubelet-ips: ${JSON.stringify(ip)} is not an IP address\n${USAGE}`);
  // none (a node without a global address yet): keep the options' addresses
  return ips.length ? ips : undefined;
}

function parseArgs(argv: string[]): CliArgs {
  const out: Partial<CliArgs> & { kubeletStarted: boolean; quiet: boolean; notify: boolean } = { kubeletStarted: false, quiet: false, notify: false };
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
    else if (a === '--kubelet-ips') {
      const ips = parseIps(value());
      if (ips) out.kubeletIPs = ips;
    } else if (a === '--ingress-listen') out.ingressListen = parseListen(value());
    else if (a === '--notify') out.notify = true;
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
    ...(args.kubeletIPs ? { kubeletIPs: args.kubeletIPs } : {}),
  });
  if (!args.quiet) sim.events.on('log', (line: string) => process.stderr.write(`${line}\n`));
  const forwarder = args.ingressListen ? await forward(args.ingressListen, sim.endpoints.ingress) : undefined;
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`simulator: ${signal}, stopping\n`);
    Promise.all([forwarder?.close(), sim.stop()]).then(
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
      ...(forwarder ? { ingressListen: args.ingressListen } : {}),
    })}\n`,
  );
  if (args.notify && process.env.NOTIFY_SOCKET) {
    // The blocking form (no --no-block) waits until systemd has taken the message (systemd >= 246).
    const res = spawnSync('/usr/bin/systemd-notify', ['--ready', `--status=API ${sim.apiUrl}, ingress ${args.ingressListen ? `${args.ingressListen.host}:${args.ingressListen.port}` : `${sim.endpoints.ingress.host}:${sim.endpoints.ingress.port}`}`], { encoding: 'utf8' });
    if (res.status !== 0) process.stderr.write(`simulator: systemd-notify --ready failed (exit ${res.status}): ${res.stderr ?? res.error?.message ?? ''}\n`);
  }
}

/** A TCP pass-through from `listen` to `target`; a reset upstream (the router is down) resets the client too. */
async function forward(listen: { host: string; port: number }, target: { host: string; port: number }): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: target.host, port: target.port });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream);
    upstream.pipe(client);
    upstream.on('error', () => (client.destroyed ? undefined : client.resetAndDestroy()));
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((res, rej) => {
    server.once('error', (e: Error) => rej(new Error(`--ingress-listen ${listen.host}:${listen.port}: ${e.message}`)));
    server.listen(listen.port, listen.host, () => res());
  });
  return {
    close: () =>
      new Promise<void>((res) => {
        for (const s of sockets) s.destroy();
        server.close(() => res());
      }),
  };
}

main().catch((e: Error) => {
  process.stderr.write(`simulator: ${e.stack ?? e.message}\n`);
  process.exit(1);
});
