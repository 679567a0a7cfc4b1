// One relocation scenario for tests, the demo and the benchmark: the cluster simulator, a stand-in node
// (temp root, stand-in host tools on PATH that tell the simulator when kubelet starts), the node-local
// kubeconfig where the agent expects it, and a site-config "volume" for this cluster.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, copyFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { createCa } from '../sim/pki';
import { csrRefileAtLeast, minorVersion } from '../sim/cluster/options';
import { startSimulator, type Simulator, type SimulatorOptions } from '../sim/index';
import { DEFAULT_KUBECONFIG, DONE_MARKER, STATIC_POD_RESOURCES_DIR, TRUSTED_KEYS_DIR } from '../../src/paths';
import { createStandInNode, type StandInLan, type StandInNode } from './standin-host';
import { ensureBundle } from './bundle';
import { signedMedia } from './signed-media';

export interface Scenario {
  sim: Simulator;
  node: StandInNode;
  /** Arguments every agent run of this scenario needs (root, ingress endpoint). */
  agentArgs: string[];
  /** Runs the bundled agent's `run` to completion. */
  run(extraArgs?: string[], opts?: { timeoutMs?: number; env?: NodeJS.ProcessEnv }): Promise<AgentRun>;
  /** Starts the bundled agent's `run` and returns the child process (for kills and live output). */
  spawnRun(extraArgs?: string[], env?: NodeJS.ProcessEnv): ChildProcess;
  cleanup(): Promise<void>;
}

export interface AgentRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as the agent's JSON log lines. */
  logs: { level: string; msg: string; [k: string]: unknown }[];
}

export interface SiteConfigOptions {
  name?: string;
  baseDomain?: string;
  withNetwork?: boolean;
  extraSpec?: Record<string, unknown>;
}

/** A site-config document for the simulated cluster (everything the agent changes, unless turned off). */
export function siteConfigFor(sim: Simulator, opts: SiteConfigOptions = {}): string {
  const ip = sim.options.nodeIPs[0]!;
  const spec: Record<string, unknown> = {
    clusterName: sim.options.clusterName,
    hostname: sim.options.nodeName,
    baseDomain: opts.baseDomain ?? 'store42.example.com',
    ...(opts.withNetwork === false
      ? {}
      : {
          network: {
            nmstate: {
              interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: false, address: [{ ip, 'prefix-length': 24 }] } }],
              routes: { config: [{ destination: '0.0.0.0/0', 'next-hop-address': ip.replace(/\.\d+$/, '.1'), 'next-hop-interface': 'eno1' }] },
              'dns-resolver': { config: { server: [ip.replace(/\.\d+$/, '.1')] } },
            },
            verify: { ping: [ip.replace(/\.\d+$/, '.1')], resolve: ['registry.store42.example.com'] },
          },
        }),
    timeouts: { settleStability: '2s' },
    ...opts.extraSpec,
  };
  return stringify({ apiVersion: 'sno-reconfigure.io/v1', kind: 'SiteConfig', metadata: { name: opts.name ?? 'store-0042' }, spec });
}

/**
 * Files of a site-config volume made signed media for the node at `nodeRoot` (test/support/signed-media.ts): every
 * file beside site-config.yaml pinned. Tag mirrors and a registry CA need signed media (src/siteconfig/trust.ts).
 */
export function signedSiteConfigFiles(nodeRoot: string, files: Record<string, string>, opts: { issued?: string } = {}): Record<string, string> {
  return signedMedia(nodeRoot, files, Object.keys(files).filter((f) => f !== 'site-config.yaml'), opts);
}

/**
 * The demo's site-config volume (`npm run demo`, and the version matrix in npm test): every change the agent
 * can make — the site network in its own file, a pull secret, digest and tag mirrors and their registry CA. Tag
 * mirrors and the CA need signed media: sign it for the node with signedSiteConfigFiles.
 * The demo holds the settled cluster 5 s for the person watching; tests pass the 2 s of siteConfigFor.
 */
export function demoSiteConfigFiles(sim: Simulator, opts: { settleStability?: string } = {}): Record<string, string> {
  const registryCa = createCa('registry.store42.example.com CA');
  const base = parse(siteConfigFor(sim, { extraSpec: { timeouts: { settleStability: opts.settleStability ?? '5s' } } })) as { spec: Record<string, unknown> };
  const network = base.spec.network as Record<string, unknown>;
  const spec = {
    ...base.spec,
    network: { nmstateFile: 'network.yaml', verify: network.verify },
    pullSecretFile: 'pull-secret.json',
    pullSecretMode: 'merge',
    imageDigestMirrors: [
      { source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'] },
      { source: 'quay.io/openshift-release-dev/ocp-v4.0-art-dev', mirrors: ['registry.store42.example.com:8443/ocp/art-dev'] },
    ],
    // The operator catalogs are pulled by tag: ImageTagMirrorSet, from OpenShift 4.13 on.
    ...(minorVersion(sim.options.version) >= 13 ? { imageTagMirrors: [{ source: 'registry.redhat.io/redhat', mirrors: ['registry.store42.example.com:8443/redhat'] }] } : {}),
    additionalTrustBundleFile: 'registry-ca.pem',
  };
  return {
    'site-config.yaml': stringify({ apiVersion: 'sno-reconfigure.io/v1', kind: 'SiteConfig', metadata: { name: 'store-0042' }, spec }),
    'network.yaml': stringify(network.nmstate),
    'pull-secret.json': JSON.stringify({ auths: { 'registry.store42.example.com:8443': { auth: Buffer.from('store42:s3cr3t-demo').toString('base64') } } }),
    'registry-ca.pem': registryCa.certPem,
  };
}

export function parseLogs(stdout: string): AgentRun['logs'] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as AgentRun['logs'][number]);
}

/** `recoveryToken: false` leaves out the kube-apiserver's localhost-recovery-client token (the agent's fallback credential). */
export async function startScenario(opts: { sim?: SimulatorOptions; recoveryToken?: boolean; node?: { lan?: StandInLan; extraEnv?: NodeJS.ProcessEnv } } = {}): Promise<Scenario> {
  const bundle = ensureBundle();
  const timeScale = opts.sim?.timeScale ?? 0.002;
  const sim = await startSimulator({ timeScale, ...opts.sim, durations: { csrRefile: csrRefileAtLeast(60_000, timeScale), ...opts.sim?.durations } });
  // The agent's `systemctl reboot` stops it, as systemd would (stand-ins/host-tool.cjs); the boot is played below.
  const node = createStandInNode({ nodeName: sim.options.nodeName, nodeIps: sim.options.kubeletIPs, siteAddress: sim.options.nodeIPs[0]!, simControlUrl: sim.controlUrl, ...opts.node, extraEnv: { STANDIN_STOP_ON_REBOOT: '1', ...opts.node?.extraEnv } });
  const kubeconfig = path.join(node.root, DEFAULT_KUBECONFIG);
  mkdirSync(path.dirname(kubeconfig), { recursive: true });
  copyFileSync(sim.kubeconfigs.localhostRecovery, kubeconfig);
  if (opts.recoveryToken !== false) cpSync(sim.staticPodResourcesDir, path.join(node.root, STATIC_POD_RESOURCES_DIR), { recursive: true });
  const agentArgs = ['--root', node.root, '--ingress-endpoint', `${sim.endpoints.ingress.host}:${sim.endpoints.ingress.port}`];
  const children = new Set<ChildProcess>();
  // The reboot the agent asks for (the network step's `systemctl reboot`): the stand-in stops the agent (SIGTERM) as
  // systemd would, and the agent's next start comes after the boot, whose early network phase does the work
  // (node.powerCycle()).
  const spawnRun = (extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}) => {
    if (node.rebootRequested()) node.powerCycle();
    const child = spawn(process.execPath, [bundle, 'run', ...agentArgs, ...extraArgs], { env: { ...node.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    child.on('exit', () => children.delete(child));
    return child;
  };
  const runOnce = (extraArgs: string[], env: NodeJS.ProcessEnv | undefined, timeoutMs: number) =>
    new Promise<AgentRun>((resolve, reject) => {
      const child = spawnRun(extraArgs, env);
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`agent run did not finish within the time left (${timeoutMs} ms)\n${stdout.slice(-4000)}\n${stderr.slice(-2000)}`));
      }, timeoutMs);
      // 'close', not 'exit': the last output of a short run may come after the process has exited.
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stdout, stderr, logs: [] });
      });
    });
  return {
    sim,
    node,
    agentArgs,
    spawnRun,
    // Until the agent ends without asking for a reboot: each boot's early-phase lines and each start's output, in order.
    run: async (extraArgs = [], runOpts = {}) => {
      const deadline = Date.now() + (runOpts.timeoutMs ?? 120_000);
      let stdout = '';
      let stderr = '';
      for (;;) {
        if (node.rebootRequested()) stdout += node.powerCycle();
        const res = await runOnce(extraArgs, runOpts.env, Math.max(1, deadline - Date.now()));
        stdout += res.stdout;
        stderr += res.stderr;
        if (!node.rebootRequested()) return { ...res, stdout, stderr, logs: parseLogs(stdout) };
      }
    },
    cleanup: async () => {
      for (const c of children) c.kill('SIGKILL');
      await sim.stop();
      node.cleanup();
    },
  };
}

/**
 * The node moved on after a relocation: re-armed by hand (the done marker removed), the last stick (sdb1) pulled, and
 * store 77's config attached on its own stick without spec.ssh or spec.kubeadminPassword — signed for the node and
 * issued after the last one, or unsigned on a node that no longer holds trusted keys. Runs the agent once.
 */
/** `fn` in a scenario of its own, cleaned up however it ends. */
export async function inScenario<T>(fn: (s: Scenario) => Promise<T>, opts: Parameters<typeof startScenario>[0] = {}): Promise<T> {
  const s = await startScenario(opts);
  try {
    return await fn(s);
  } finally {
    await s.cleanup();
  }
}

export function runAtNextStore(s: Scenario, opts: { unsigned?: boolean } = {}): Promise<AgentRun> {
  rmSync(path.join(s.node.root, DONE_MARKER));
  if (opts.unsigned) rmSync(path.join(s.node.root, TRUSTED_KEYS_DIR), { recursive: true });
  s.node.detachVolume('sdb1');
  const files = { 'site-config.yaml': siteConfigFor(s.sim, { name: 'store-0077', baseDomain: 'store77.example.com' }) };
  s.node.attachVolume('sdc1', 'SITE-CONFIG', opts.unsigned ? files : signedSiteConfigFiles(s.node.root, files, { issued: '2026-11-20T09:00:00Z' }));
  return s.run(['--once'], { timeoutMs: 15 * 60_000 });
}
