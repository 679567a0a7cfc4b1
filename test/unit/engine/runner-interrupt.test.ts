// A step interrupted while it applies (systemctl stop, a shutdown: the run's signal aborts) is never recorded as
// done: the journal keeps it running, and the next start applies it again (issue 41 — a runner that marked it done
// was caught only by a slow integration test, after its 30-minute deadline). The run loop (src/engine/runner.ts)
// with its real journal (src/engine/journal.ts) on a temp node root, a site-config in the drop directory and two
// steps of this test's own; no bundle, no cluster. Also when the run starts the slow work of the steps ahead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runAgent, EXIT } from '../../../src/engine/runner';
import type { JournalData } from '../../../src/engine/journal';
import { StepError, type Step, type StepContext } from '../../../src/engine/step';
import { LocalHost } from '../../../src/host/host';
import { createLogger } from '../../../src/log';
import { DEFAULT_DROP_DIR, DEFAULT_STATE_DIR, DEFAULT_KUBECONFIG, UNSIGNED_MEDIA_FILE } from '../../../src/paths';
import { recordRenamedIn } from '../../support/drop-dir';

const SITE_CONFIG = `apiVersion: sno-reconfigure.io/v1
kind: SiteConfig
metadata:
  name: store-0042
spec:
  clusterName: sno1
  baseDomain: store42.example.com
`;

interface Calls {
  network: number;
  kubelet: number;
}

/** A step that counts its applies; with `interrupt`, its apply is cut off by the run's signal, as a stop does. */
function countingStep(name: 'network' | 'kubelet', calls: Calls, interrupt?: AbortController): Step {
  return {
    name,
    title: `Step ${name}`,
    plan: async () => [],
    check: async () => false,
    apply: async (ctx: StepContext) => {
      calls[name] += 1;
      if (!interrupt) return;
      // A long wait (an API, a rollout) that the stop ends: what every step's waits do with ctx.signal.
      const stopped = new Promise<never>((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error), { once: true }));
      interrupt.abort(new Error('stopped by a signal'));
      await stopped;
    },
    verify: async () => {},
  };
}

function node(): { root: string; journal(): JournalData; cleanup(): void } {
  const root = mkdtempSync(path.join(tmpdir(), 'sno-runner-interrupt-'));
  const put = (nodePath: string, content: string) => {
    mkdirSync(path.dirname(path.join(root, nodePath)), { recursive: true });
    writeFileSync(path.join(root, nodePath), content);
  };
  // Renamed in, as the drop directory's writer contract says (a file written in place is not taken: detect.ts),
  // written a minute ago: the drop directory has been quiet longer than dropStableMs when the run looks (a run started
  // within 50 ms of the write found it unsettled and, with --once, nothing).
  put(`${DEFAULT_DROP_DIR}/site-config.yaml.part`, SITE_CONFIG);
  const written = new Date(Date.now() - 60_000);
  utimesSync(path.join(root, `${DEFAULT_DROP_DIR}/site-config.yaml.part`), written, written);
  renameSync(path.join(root, `${DEFAULT_DROP_DIR}/site-config.yaml.part`), path.join(root, `${DEFAULT_DROP_DIR}/site-config.yaml`));
  // Renamed in while an earlier start of the agent watched (the record it keeps; this test is about the journal).
  recordRenamedIn(root, ['site-config.yaml'], DEFAULT_DROP_DIR);
  put(UNSIGNED_MEDIA_FILE, '');
  put('/etc/hostname', 'sno1-node\n');
  return {
    root,
    journal: () => JSON.parse(readFileSync(path.join(root, DEFAULT_STATE_DIR, 'journal.json'), 'utf8')) as JournalData,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

function run(root: string, steps: Step[], signal?: AbortSignal): Promise<number> {
  const lines: string[] = [];
  return runAgent({
    steps,
    host: new LocalHost({ root, env: {} }),
    log: createLogger({ write: (s) => void lines.push(s), journal: false, format: 'prose' }),
    env: {},
    stateDir: DEFAULT_STATE_DIR,
    dropDir: DEFAULT_DROP_DIR,
    labels: ['site-config'],
    kubeconfig: DEFAULT_KUBECONFIG,
    once: true,
    dryRun: false,
    rescanMs: 50,
    dropStableMs: 50,
    ...(signal ? { signal } : {}),
  });
}

test('a step whose apply is interrupted stays running in the journal, the steps after it do not start, and the next start applies it again', async () => {
  const n = node();
  try {
    const calls: Calls = { network: 0, kubelet: 0 };
    const stop = new AbortController();
    assert.equal(await run(n.root, [countingStep('network', calls, stop), countingStep('kubelet', calls)], stop.signal), EXIT.ok);
    let j = n.journal();
    assert.equal(j.phase, 'running');
    assert.equal(j.steps.network?.state, 'running', 'the interrupted step was recorded as something other than running');
    assert.equal(j.steps.network?.endedAt, undefined);
    assert.equal(j.steps.kubelet?.attempts ?? 0, 0);
    assert.deepEqual(calls, { network: 1, kubelet: 0 });

    // The next start (a reboot): resumes from the journal, applies the interrupted step again, then the rest.
    assert.equal(await run(n.root, [countingStep('network', calls), countingStep('kubelet', calls)]), EXIT.ok);
    j = n.journal();
    assert.deepEqual(calls, { network: 2, kubelet: 1 });
    assert.equal(j.phase, 'succeeded');
    assert.equal(j.steps.network?.state, 'done');
    assert.equal(j.steps.network?.attempts, 2);
    assert.equal(j.starts, 2);
  } finally {
    n.cleanup();
  }
});

// The domain step's three RSA keys (about 0.6 s of CPU) were generated when the run began: a run that stopped at the
// network — the failure a site sees most — threw them away, and they competed with the network's verification.
test("the steps' slow work ahead starts once the site network is in place, before the next step, and never for a run that stops at the network", async () => {
  for (const networkFails of [true, false]) {
    const n = node();
    try {
      const events: string[] = [];
      const network: Step = {
        name: 'network',
        title: 'Apply the site network',
        plan: async () => [],
        check: async () => false,
        apply: async () => {
          events.push('network applied');
          if (networkFails) throw new StepError('the gateway 10.17.0.1 does not answer', 'check the cable');
        },
        verify: async () => {},
      };
      const kubelet: Step = { ...countingStep('kubelet', { network: 0, kubelet: 0 }), apply: async () => void events.push('kubelet applied') };
      const domain: Step = { ...countingStep('kubelet', { network: 0, kubelet: 0 }), name: 'domain', prepare: () => void events.push('domain prepared'), apply: async () => void events.push('domain applied') };
      await run(n.root, [network, kubelet, domain]);
      assert.deepEqual(events, networkFails ? ['network applied'] : ['network applied', 'domain prepared', 'kubelet applied', 'domain applied']);
    } finally {
      n.cleanup();
    }
  }
});
