// Building a StepContext: the same for a run (journaled) and for a plan (nothing persisted).
import type { Host } from '../host/host';
import type { Logger } from '../log';
import type { Notifier } from '../host/notify';
import type { LoadedSiteConfig } from '../siteconfig/types';
import type { ClusterClient } from '../cluster/types';
import type { ClosableClusterClient } from '../cluster/client';
import { createAgentClient } from './credentials';
import { createDeadline } from './clock';
import type { Journal } from './journal';
import type { ProgressReporter } from './progress';
import type { Report } from './report';
import { StepError, type BackgroundTask, type BackgroundTasks, type Clock, type Endpoint, type Step, type StepContext } from './step';

export class Background implements BackgroundTasks {
  private readonly tasks = new Map<string, BackgroundTask>();
  get<T extends BackgroundTask>(name: string): T | undefined {
    return this.tasks.get(name) as T | undefined;
  }
  add<T extends BackgroundTask>(name: string, task: T): T {
    this.tasks.set(name, task);
    return task;
  }
  async stopAll(): Promise<void> {
    await Promise.allSettled([...this.tasks.values()].map((t) => t.stop()));
    this.tasks.clear();
  }
}

export interface LazyCluster {
  (): Promise<ClusterClient>;
  /** Frees the client's keep-alive sockets (when one was made). */
  close(): Promise<void>;
}

export function clusterOnce(host: Host, kubeconfig: string, log: Logger): LazyCluster {
  let client: Promise<ClosableClusterClient> | undefined;
  const get = () => {
    client ??= (async () => {
      if (!(await host.exists(kubeconfig))) {
        throw new StepError(`no kubeconfig at ${kubeconfig}`, 'The node-local kubeconfig is written by the kube-apiserver operator; pass another with --kubeconfig if this node keeps it elsewhere.');
      }
      return createAgentClient(host, kubeconfig, log.child({ component: 'api' }));
    })();
    client.catch(() => {
      client = undefined;
    });
    return client;
  };
  return Object.assign(get, {
    close: async () => {
      const made = await client?.catch(() => undefined);
      made?.close();
    },
  });
}

/** The API's host and port from the kubeconfig, and where the router listens on this node. */
export async function endpointsOf(cluster: () => Promise<ClusterClient>, ingress: Endpoint | undefined): Promise<{ api: Endpoint; ingress: Endpoint }> {
  const server = new URL((await cluster()).server);
  const api = { host: server.hostname.replace(/^\[|\]$/g, ''), port: Number(server.port || 443) };
  return { api, ingress: ingress ?? { host: api.host, port: 443 } };
}

/** What every step of one run (or plan) shares. */
export interface ContextBase {
  host: Host;
  log: Logger;
  site: LoadedSiteConfig;
  stateDir: string;
  kubeconfig: string;
  clock: Clock;
  signal: AbortSignal;
  cluster: () => Promise<ClusterClient>;
  background: BackgroundTasks;
  report: () => Report;
}

export function makeContext(
  step: Step,
  base: ContextBase,
  journal: Journal | undefined,
  reporter: ProgressReporter | undefined,
  notifier: Notifier | undefined,
): StepContext {
  const rec = journal?.step(step.name) ?? { state: 'pending' as const, attempts: 0, data: {} };
  const facts = journal?.data.facts ?? {};
  const log = base.log.child({ step: step.name });
  return {
    ...base,
    log,
    progress: {
      status: (text) => {
        rec.status = text;
        reporter?.detail(text).catch((e: unknown) => log.debug({ err: String(e) }, 'progress update failed'));
      },
      extendTimeout: (ms) => {
        notifier?.extendTimeout(ms).catch(() => undefined);
      },
      banner: async (content) => reporter?.outcome(content),
    },
    deadline: (label, totalMs) => createDeadline(base.clock, label, totalMs),
    data: rec.data,
    save: async () => journal?.save(),
    changed: (change) => {
      if (!journal) return;
      const key = JSON.stringify(change);
      if (!journal.data.changes.some((c) => JSON.stringify(c) === key)) journal.data.changes.push(change);
    },
    warn: (message) => {
      log.warn(message);
      if (journal && !journal.data.warnings.includes(message)) journal.data.warnings.push(message);
    },
    facts,
  };
}
