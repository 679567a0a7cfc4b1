// A minimal StepContext for driving the cluster steps against the simulator: a temp host root holding the
// node-local kubeconfig, the simulator's clock (scaled time), a real cluster client, a log collector, and
// step data kept in memory the way the engine's journal would keep it.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { createClusterClient, type ClosableClusterClient } from '../../../src/cluster/client';
import { loadKubeconfig } from '../../../src/cluster/kubeconfig';
import { createDeadline } from '../../../src/engine/clock';
import { emptyJournal } from '../../../src/engine/journal';
import { buildReport } from '../../../src/engine/report';
import { STEPS } from '../../../src/steps/index';
import type { BackgroundTask, Change, RunFacts, Step, StepContext, StepName } from '../../../src/engine/step';
import { writeBanner } from '../../../src/host/banner';
import { LocalHost } from '../../../src/host/host';
import { createLogger } from '../../../src/log';
import { DEFAULT_KUBECONFIG, DEFAULT_STATE_DIR } from '../../../src/paths';
import { DEFAULT_TIMEOUTS, type ResolvedSiteConfig } from '../../../src/siteconfig/types';
import { startSimulator, type Simulator } from '../../sim/index';
import { readFile } from 'node:fs/promises';

export interface Harness {
  root: string;
  host: LocalHost;
  /** Node path. */
  stateDir: string;
  site: ResolvedSiteConfig;
  facts: RunFacts;
  changes: Change[];
  warnings: string[];
  statuses: string[];
  logLines: string[];
  data: Map<StepName, Record<string, unknown>>;
  client: ClosableClusterClient;
  contextFor(step: StepName, signal?: AbortSignal): StepContext;
  /** check → apply → verify, as the engine runs a step; 'done' when check said so. */
  run(step: Step): Promise<'done' | 'applied'>;
  /** Absolute path of a node path under the root. */
  file(nodePath: string): string;
  cleanup(): Promise<void>;
}

export interface HarnessOptions {
  site?: Partial<ResolvedSiteConfig>;
  facts?: RunFacts;
  /** Site-config digest (a new one = a new run); random by default. */
  digest?: string;
  /** Reuse the root of an earlier harness (a second run on the same node). */
  root?: string;
}

export function siteConfig(overrides: Partial<ResolvedSiteConfig> = {}): ResolvedSiteConfig {
  return {
    name: 'store-0042',
    baseDomain: 'store42.example.com',
    pullSecretMode: 'merge',
    imageDigestMirrors: [],
    certificates: {},
    timeouts: { ...DEFAULT_TIMEOUTS },
    ...overrides,
  };
}

export async function createHarness(sim: Simulator, opts: HarnessOptions = {}): Promise<Harness> {
  const ownRoot = !opts.root;
  const root = opts.root ?? mkdtempSync(path.join(tmpdir(), 'sno-steps-'));
  const host = new LocalHost({ root });
  const kubeconfigFile = host.resolve(DEFAULT_KUBECONFIG);
  mkdirSync(path.dirname(kubeconfigFile), { recursive: true });
  writeFileSync(kubeconfigFile, readFileSync(sim.kubeconfigs.localhost));
  const site = siteConfig(opts.site);
  const digest = opts.digest ?? randomBytes(16).toString('hex');
  const logLines: string[] = [];
  const log = createLogger({ format: 'json', level: 'debug', journal: false, write: (line) => void logLines.push(line) });
  const client = createClusterClient(await loadKubeconfig((p) => readFile(p), kubeconfigFile), { log, sleep: (ms, s) => sim.clock.sleep(ms, s) });
  const facts: RunFacts = {
    nodeName: sim.options.nodeName,
    nodeAddresses: [...sim.options.kubeletIPs],
    clusterName: sim.options.clusterName,
    oldBaseDomain: sim.options.baseDomain,
    endpoints: sim.endpoints,
    ...opts.facts,
  };
  const changes: Change[] = [];
  const warnings: string[] = [];
  const statuses: string[] = [];
  const data = new Map<StepName, Record<string, unknown>>();
  const tasks = new Map<string, BackgroundTask>();

  const contextFor = (step: StepName, signal: AbortSignal = new AbortController().signal): StepContext => {
    if (!data.has(step)) data.set(step, {});
    return {
      host,
      log: log.child({ step }),
      site: { resolved: site, sourcePath: '/run/site-config/site-config.yaml', digest, warnings: [] },
      stateDir: DEFAULT_STATE_DIR,
      kubeconfig: DEFAULT_KUBECONFIG,
      clock: sim.clock,
      progress: { status: (text) => void statuses.push(text), extendTimeout: () => undefined, banner: (content) => writeBanner(host, content) },
      signal,
      cluster: async () => client,
      deadline: (label, totalMs) => createDeadline(sim.clock, label, totalMs),
      data: data.get(step) as Record<string, unknown>,
      save: async () => undefined,
      changed: (c) => void changes.push(c),
      warn: (m) => void warnings.push(m),
      facts,
      report: () => buildReport({ ...emptyJournal(new Date(sim.clock.now())), facts, changes, warnings }, STEPS, site.baseDomain, new Date(sim.clock.now())),
      background: {
        get: <T extends BackgroundTask>(name: string) => tasks.get(name) as T | undefined,
        add: <T extends BackgroundTask>(name: string, task: T) => {
          tasks.set(name, task);
          return task;
        },
      },
    };
  };

  return {
    root,
    host,
    stateDir: DEFAULT_STATE_DIR,
    site,
    facts,
    changes,
    warnings,
    statuses,
    logLines,
    data,
    client,
    contextFor,
    async run(step) {
      const ctx = contextFor(step.name);
      if (await step.check(ctx)) return 'done';
      await step.apply(ctx);
      await step.verify(ctx);
      return 'applied';
    },
    file: (nodePath) => host.resolve(nodePath),
    async cleanup() {
      for (const t of tasks.values()) await t.stop();
      client.close();
      if (ownRoot) rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Requests by the agent (the node-local kubeconfig's user) that change something, from the simulator's request log. */
export function writesIn(requests: readonly { method: string; path: string; user?: string }[]): string[] {
  return requests.filter((r) => r.user === AGENT_USER && !['GET', 'HEAD', 'OPTIONS'].includes(r.method)).map((r) => `${r.method} ${r.path}`);
}

/** The user of the simulator's localhost kubeconfig (test/sim/index.ts). */
export const AGENT_USER = 'system:admin';


/** A simulator of `version` with kubelet running and a harness on it for `site`; both stopped afterwards. */
export async function withSim<T>(version: string, site: Partial<ResolvedSiteConfig>, fn: (sim: Simulator, h: Harness) => Promise<T>): Promise<T> {
  const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running', version });
  const h = await createHarness(sim, { site });
  try {
    return await fn(sim, h);
  } finally {
    await h.cleanup();
    await sim.stop();
  }
}
