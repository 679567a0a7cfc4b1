// A StepContext for driving one step in a test: a real journal in the temp root, real clock unless given.
import { Journal } from '../../src/engine/journal';
import { buildReport } from '../../src/engine/report';
import { DEFAULT_KUBECONFIG } from '../../src/paths';
import { STEPS } from '../../src/steps/index';
import { Background, makeContext } from '../../src/engine/context';
import { realClock } from '../../src/engine/clock';
import type { Clock, Step, StepContext } from '../../src/engine/step';
import type { Host } from '../../src/host/host';
import type { ClusterClient } from '../../src/cluster/types';
import { createLogger, type Logger } from '../../src/log';
import { DEFAULT_TIMEOUTS, type LoadedSiteConfig, type ResolvedSiteConfig } from '../../src/siteconfig/types';

export function siteOf(resolved: Partial<ResolvedSiteConfig> = {}): LoadedSiteConfig {
  return {
    resolved: { name: 'test-site', baseDomain: 'store42.example.com', pullSecretMode: 'merge', imageDigestMirrors: [], certificates: {}, timeouts: { ...DEFAULT_TIMEOUTS }, ...resolved },
    sourcePath: '/nonexistent/site-config.yaml',
    digest: 'f'.repeat(64),
    warnings: [],
  };
}

export interface TestContext {
  ctx: StepContext;
  journal: Journal;
  logs: Record<string, unknown>[];
  background: Background;
}

export async function testContext(step: Step, opts: { host: Host; site?: LoadedSiteConfig; clock?: Clock; cluster?: () => Promise<ClusterClient>; journal?: Journal; log?: Logger }): Promise<TestContext> {
  const logs: Record<string, unknown>[] = [];
  const log = opts.log ?? createLogger({ format: 'json', journal: false, level: 'debug', write: (s) => logs.push(JSON.parse(s) as Record<string, unknown>) });
  const journal = opts.journal ?? (await Journal.open(opts.host, '/var/lib/sno-reconfigure'));
  const background = new Background();
  const ctx = makeContext(
    step,
    {
      host: opts.host,
      log,
      site: opts.site ?? siteOf(),
      stateDir: journal.stateDir,
      clock: opts.clock ?? realClock,
      signal: new AbortController().signal,
      cluster: opts.cluster ?? (() => Promise.reject(new Error('no cluster in this test'))),
      background,
      kubeconfig: DEFAULT_KUBECONFIG,
      report: () => buildReport(journal.data, STEPS, undefined, new Date()),
    },
    journal,
    undefined,
    undefined,
  );
  return { ctx, journal, logs, background };
}

/** A clock whose sleeps return at once while time advances: long waits run in microseconds. */
export function fastClock(start = Date.parse('2026-11-22T10:00:00Z')): Clock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    sleep: async (ms, signal) => {
      if (signal?.aborted) throw new Error('aborted');
      now += ms;
      await new Promise((r) => setImmediate(r));
    },
    advance: (ms) => {
      now += ms;
    },
  };
}
