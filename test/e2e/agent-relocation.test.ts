// The agent end to end on real systemd (issue #7): a node prepared at the factory is powered on at its site,
// waits for the site-config stick, reconfigures itself and disables its service (scenario 1); a reboot does
// not run it again (scenario 2); power cuts at several points of a run converge to the same end state
// (scenario 3, on a second node running beside the first, so both end states are compared directly).
// The node: test/e2e/testbed/sno-node.ts (what is real and what is a stand-in is listed there).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { STEPS } from '../../src/steps/index';
import { BANNER_PATH, DONE_MARKER, KUBELET_HOLD_FILE, KUBELET_UNIT, UNIT_NAME } from '../../src/paths';
import { Testbed, ensureRootfsImage, leftovers } from './testbed/index';
import { CORE, eventually, factoryNode, signedStickFiles, siteConfigYaml, SITE_LAN, SITE_NTP, SITE_SSH_KEY, type AgentJournal, type SnoNode } from './testbed/sno-node';
import type { Machine } from './testbed/machine';
import { pollUntil } from './testbed/proc';

const bed = new Testbed();
after(async () => {
  await bed.cleanup();
  assert.deepEqual(leftovers(), { processes: [], loopDevices: [], mounts: [], cgroups: [], tempDirs: [] });
});

// spec.ntp: the site's NTP server is the real chronyd the testbed runs on the node's loopback (sno-node.ts).
// SSH keys need signed media (src/siteconfig/trust.ts): the stick is signed for the node (signedStickFiles).
const SITE_CONFIG = siteConfigYaml({ spec: { ntp: { servers: [SITE_NTP] }, ssh: { authorizedKeys: [SITE_SSH_KEY], factoryKeys: 'replace' } } });
/** A step's title as this agent logs it. */
const titleOf = (name: string) => STEPS.find((s) => s.name === name)?.title ?? `(no step ${name})`;
const CONFIG_NAME = 'store-0042';

/** Scenario 1's end state, for scenario 3 to compare with. */
let resolveReference!: (s: Record<string, unknown>) => void;
let rejectReference!: (e: unknown) => void;
const referenceEndState = new Promise<Record<string, unknown>>((res, rej) => {
  resolveReference = res;
  rejectReference = rej;
});
referenceEndState.catch(() => undefined);

/**
 * Where each sampled StatusText belongs among the run's phases (the headlines the agent logged at info, in
 * order, then the final line); -1 for a status that is none of them.
 */
/** Each sample's phase, searched from the last one found: a phase seen again after the reboot is the later one. */
function phaseIndexes(samples: string[], phases: string[]): number[] {
  const all = [...phases, `site-config "${CONFIG_NAME}" applied`];
  let from = 0;
  return samples.map((s) => {
    const i = all.findIndex((p, k) => k >= from && (s === p || s.startsWith(`${p}: `)));
    if (i >= 0) from = i;
    return i;
  });
}

const EARLY_KEYS = `${CORE.home}/.ssh/authorized_keys.d/sno-reconfigure`;
interface EarlyKeys {
  mode: number;
  uid: number;
  gid: number;
  text: string;
}
/** The early SSH keys file as first seen on the running node (polled: it lives from the first step to finish). */
function watchEarlyKeys(m: Machine): { stop(): EarlyKeys | undefined } {
  let seen: EarlyKeys | undefined;
  const timer = setInterval(() => {
    if (seen) return;
    try {
      const st = statSync(m.livePath(EARLY_KEYS));
      seen = { mode: st.mode & 0o777, uid: st.uid, gid: st.gid, text: readFileSync(m.livePath(EARLY_KEYS), 'utf8') };
    } catch {
      // not written yet
    }
  }, 50);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      return seen;
    },
  };
}

describe('sno-reconfigure on real systemd: a relocation', { concurrency: true }, () => {
  describe('scenarios 1 and 2: one node, no incident', { concurrency: 1 }, () => {
    let node: SnoNode;

    test('1. boot at the site → waits for the stick → reconfigures → disables itself; journal, status, StatusText and banner tell the story', async (t) => {
      try {
        await ensureRootfsImage();
        node = await factoryNode(bed);
        const m = node.machine;
        await node.boot();

        // --- waiting: nothing to do until the stick comes
        await node.waitForAgent('waiting', (j) => j?.phase === 'waiting', 60_000);
        // the phase shows on systemd's StatusText, then in the journal file, then on the banner
        await eventually(async () => {
          assert.deepEqual(await node.unit(UNIT_NAME, ['ActiveState', 'SubState', 'StatusText']), { ActiveState: 'active', SubState: 'running', StatusText: 'waiting for the site-config' });
          assert.match(node.banner() ?? '', /WAITING — waiting for the site-config/);
        });
        assert.equal((await node.status()).phase, 'waiting');
        assert.match(await node.statusText(), /^Phase: +waiting for a site-config$/m);
        // kubelet is held by the factory, and nothing was touched yet
        assert.equal((await node.unit(KUBELET_UNIT, ['ActiveState'])).ActiveState, 'inactive');
        assert.equal(node.exists(KUBELET_HOLD_FILE), true);
        assert.deepEqual(node.nmstateCalls(), []);

        // --- the technician plugs the stick in
        const sampler = node.sampleStatusText();
        const earlyKeys = watchEarlyKeys(m);
        await bed.insertMedia(m, signedStickFiles(m, { 'site-config.yaml': SITE_CONFIG }));
        let samples: string[] = [];
        try {
          await node.waitForSuccess();
        } finally {
          samples = await sampler.stop();
          t.diagnostic(`StatusText samples: ${JSON.stringify(samples.map((x) => (x.length > 100 ? `${x.slice(0, 100)}…` : x)))}`);
        }

        // --- the service is done with this node
        assert.deepEqual(await node.unit(UNIT_NAME, ['ActiveState', 'Result', 'UnitFileState', 'NRestarts']), { ActiveState: 'inactive', Result: 'success', UnitFileState: 'disabled', NRestarts: '0' });
        assert.equal(node.exists(DONE_MARKER), true);
        // The stick came after boot: the agent rebooted the node once, for the early network phase (docs/network.md).
        assert.equal(m.requestedReboots, 1);
        // kubelet released: no hold, not masked, enabled and running
        assert.deepEqual(await node.unit(KUBELET_UNIT, ['ActiveState', 'UnitFileState', 'ConditionResult']), { ActiveState: 'active', UnitFileState: 'enabled', ConditionResult: 'yes' });
        assert.equal(node.exists(KUBELET_HOLD_FILE), false);
        assert.equal((await m.systemctl('is-enabled', KUBELET_UNIT)).stdout.trim(), 'enabled');

        // --- the journal: every phase at info, in order (journald may still be reading the last lines); no error
        const report = JSON.parse(m.readFile('/var/lib/sno-reconfigure/report.json')) as { result: string; steps: { name: string; state: string }[] };
        const titles = report.steps.map((s) => titleOf(s.name));
        const entries = await eventually(async () => {
          const all = await node.agentLog('-p', 'info');
          assert.ok(all.some((e) => e.log?.msg === `site-config "${CONFIG_NAME}" applied: reconfiguration complete`), 'the last line is in');
          return all;
        });
        // Before the reboot: the config is taken and the network step asks for the reboot; after it, the run resumes at
        // the network step (applied by the early phase at that boot) and goes on.
        const [sshTitle, networkTitle, ...afterNetwork] = titles;
        assert.deepEqual([sshTitle, networkTitle], ['Let the site log in over SSH', 'Apply the site network']);
        const applying = `applying site-config "${CONFIG_NAME}"`;
        const expectedPhases = ['waiting for the site-config', applying, sshTitle!, networkTitle!, applying, networkTitle!, ...afterNetwork];
        const phases = entries.flatMap((e) => (e.log && expectedPhases.includes(e.log.msg) ? [e.log.msg] : []));
        assert.deepEqual(phases, expectedPhases);
        // The journal reads as prose (issue 17): no JSON record, and each step's lines name their step.
        assert.deepEqual(entries.filter((e) => e.message.trimStart().startsWith('{')).map((e) => e.message), [], 'no JSON line in the journal');
        for (const step of ['network', 'csr', 'settle']) assert.ok(entries.some((e) => e.log?.step === step), `a line of the ${step} step says so: ${step}: …`);
        // The README's sample journal comes from here: SNO_E2E_JOURNAL_TO=<file> keeps this run's journal as a technician reads it.
        if (process.env.SNO_E2E_JOURNAL_TO) writeFileSync(process.env.SNO_E2E_JOURNAL_TO, (await m.journalctl('-u', UNIT_NAME, '-o', 'short-iso')).stdout);
        assert.equal((await m.journalctl('-u', UNIT_NAME, '-p', 'err', '-o', 'cat')).stdout, '');

        // --- spec.ssh: the site's key could log in from the first step on (0600, core's), before the network
        // step; it is gone once the cluster's MachineConfig has it
        assert.deepEqual(earlyKeys.stop(), { mode: 0o600, uid: CORE.uid, gid: CORE.gid, text: `${SITE_SSH_KEY}\n` }, 'the early keys were on the node during the run');
        assert.equal(node.exists(EARLY_KEYS), false, 'the early keys are removed at the end');
        const earlyLine = entries.findIndex((e) => e.log?.step === 'ssh-early' && /SSH key\(s\) of the site can log in as core/.test(e.log.msg));
        assert.ok(earlyLine >= 0 && earlyLine < entries.findIndex((e) => e.log?.step === 'network'), 'the early keys are written before the network step');

        // --- spec.ntp: the real chronyd took the site's chrony.conf (restarted, no reboot) and synchronised with
        // the site's server before kubelet started
        assert.match(m.readFile('/etc/chrony.conf'), new RegExp(`^server ${SITE_NTP.replace(/\./g, '\\.')} iburst$`, 'm'));
        const clockLine = entries.findIndex((e) => e.log?.step === 'clock' && e.log.msg.startsWith(`The node's clock is synchronised with ${SITE_NTP}`));
        assert.ok(clockLine >= 0 && clockLine < entries.findIndex((e) => e.log?.msg === titleOf('kubelet')), `the clock is checked before kubelet starts: ${JSON.stringify(entries.filter((e) => e.log?.step === 'clock').map((e) => e.log?.msg))}`);
        assert.equal((JSON.parse(m.readFile('/var/lib/sno-reconfigure/report.json')) as { node: { clock?: { synchronised: boolean; source?: string } } }).node.clock?.source, SITE_NTP);

        // --- StatusText followed the phases: every sample is one of them (or its progress line), in run order
        // "starting": the agent's READY status at each start — here the start after its reboot for the network.
        const shown = samples.filter((s) => s !== 'starting');
        const idx = phaseIndexes(shown, phases);
        assert.ok(idx.every((i) => i >= 0), `StatusText values that are no phase: ${JSON.stringify(shown.filter((_, i) => idx[i]! < 0))}`);
        assert.deepEqual(idx, [...idx].sort((a, b) => a - b), `StatusText went back: ${JSON.stringify(samples)}`);
        assert.equal(idx[0], 0, 'first seen: waiting');
        assert.ok(new Set(idx.filter((i) => i >= 2)).size >= 3, `StatusText showed the steps as they ran: ${JSON.stringify(samples)}`);
        assert.ok(entries.every((e) => e.identifier !== 'sno-reconfigure' || e.log), 'every agent line is a structured log line');
        assert.equal(report.result, 'succeeded');
        assert.ok(report.steps.every((s) => s.state === 'done'), JSON.stringify(report.steps));
        t.diagnostic(`steps run: ${report.steps.map((s) => s.name).join(', ')}`);

        // --- the console banner and `status` give the outcome
        assert.match(m.readFile(BANNER_PATH), new RegExp(`DONE — site configuration "${CONFIG_NAME}" applied`));
        const status = await node.status();
        assert.equal(status.phase, 'succeeded');
        assert.equal(status.siteConfig?.name, CONFIG_NAME);
        assert.match(await node.statusText(), /^Phase: +succeeded$/m);

        // --- the network went through the checkpoint: applied, verified, committed
        assert.deepEqual(
          node.nmstateCalls().filter((c) => c !== 'show'),
          ['apply --no-commit', 'commit'],
        );
        const end = await node.endState();
        assert.match(String((end.kubeletServingCert as { ips: string }).ips), new RegExp(`IP Address:${SITE_LAN.nodeIp.replace(/\./g, '\\.')}\\b`), 'kubelet serves with a certificate for its site address');
        assert.deepEqual((end.cluster as { pendingCsrs: unknown[] }).pendingCsrs, [], 'no CSR of the node left pending');
        assert.deepEqual((end.cluster as { node: Record<string, string> }).node.Ready, 'True');
        resolveReference(end);
      } catch (e) {
        rejectReference(e);
        throw e;
      }
    });

    test('2. a reboot after success: the agent does not run again (disabled, and the done marker holds it)', async () => {
      assert.ok(node?.exists(DONE_MARKER), 'scenario 1 finished');
      const m = node.machine;
      const journalBefore = m.readFile('/var/lib/sno-reconfigure/journal.json');
      await m.reboot({ graceful: true });
      // not started at this boot: disabled, so nothing pulls it in
      assert.deepEqual(await node.unit(UNIT_NAME, ['ActiveState', 'UnitFileState', 'ExecMainStartTimestampMonotonic']), { ActiveState: 'inactive', UnitFileState: 'disabled', ExecMainStartTimestampMonotonic: '0' });
      // even started by hand, the done marker keeps it from running
      await m.execOk(['systemctl', 'start', UNIT_NAME]);
      assert.deepEqual(await node.unit(UNIT_NAME, ['ActiveState', 'ConditionResult', 'ExecMainStartTimestampMonotonic']), { ActiveState: 'inactive', ConditionResult: 'no', ExecMainStartTimestampMonotonic: '0' });
      assert.deepEqual((await node.agentLog('-b', '0')).filter((e) => e.identifier === 'sno-reconfigure'), [], 'no agent output at this boot');
      assert.equal(m.readFile('/var/lib/sno-reconfigure/journal.json'), journalBefore);
      // the node carries on: kubelet starts at boot, and status still tells what happened
      await m.waitForUnit(KUBELET_UNIT, ['ActiveState'], (u) => u.ActiveState === 'active', 60_000);
      assert.equal((await node.status()).phase, 'succeeded');
      assert.match(m.readFile(BANNER_PATH), new RegExp(`DONE — site configuration "${CONFIG_NAME}" applied`));
    });
  });

  describe('scenario 3: power cuts during the run', { concurrency: 1 }, () => {
    test('3. power cut during network apply, while waiting for the API, mid-CSR and mid-cluster-changes: each boot resumes, and it converges to the end state of scenario 1', async (t) => {
      await ensureRootfsImage();
      // The API takes ~3 s after kubelet starts (10 simulated minutes): a window to cut the power in.
      const node = await factoryNode(bed, { durations: { apiStartup: 10 * 60_000 } });
      const m = node.machine;
      // The stick is in before the technician powers the node on.
      await bed.insertMedia(m, signedStickFiles(m, { 'site-config.yaml': SITE_CONFIG }));
      const order: string[] = STEPS.map((st) => st.name);
      /** The step the journal file says is running (the agent saves it before the step's first action). */
      const runningStep = (j: AgentJournal | undefined) => order.find((name) => j?.steps[name]?.state === 'running');
      /** At `step` or past it: a busy test process may look a moment late, so a later step counts too. */
      const atOrPast = (j: AgentJournal | undefined, step: string) => {
        const running = runningStep(j);
        return running !== undefined && order.indexOf(running) >= order.indexOf(step);
      };
      const cuts: { at: string; step: string; note: string }[] = [];
      const cutWhen = async (at: string, when: (j: AgentJournal | undefined) => boolean, note: () => string = () => '', opts: { beforeRunning?: () => boolean } = {}) => {
        if (opts.beforeRunning) {
          // The early network phase runs during boot, before the system is up: cut while it is in the state asked for.
          await node.boot({ waitFor: 'none' });
          await pollUntil(() => (opts.beforeRunning!() ? true : undefined), 120_000, () => new Error(`${at}: never reached; nmstatectl calls: ${node.nmstateCalls().join(', ')}`), 5);
        } else {
          await node.boot();
          await node.waitForAgent(at, when, 120_000, 5);
        }
        await m.powerCut();
        // where it really was: the journal file on the disk as the power went
        cuts.push({ at, step: runningStep(node.agentJournal()) ?? '(between steps)', note: note() });
      };

      // 1: the site network is applied with a checkpoint, not yet committed — at boot, by the early network phase (the
      // stick was in at power-on): the stand-in holds the commit, so the cut lands between the two however busy this
      // machine is.
      const holdCommit = '/etc/nmstate-standin/hold-commit';
      m.writeFile(holdCommit, '');
      await cutWhen('network apply', () => true, () => `nmstatectl calls at the cut: ${node.nmstateCalls().join(', ')}`, { beforeRunning: () => /"phase":\s*"committing"/.test(node.readIfExists('/var/lib/sno-reconfigure/network-early.json') ?? '') });
      m.removeFile(holdCommit);
      // 2: kubelet started, the API not answering yet
      await cutWhen('waiting for the API', (j) => atOrPast(j, 'api'));
      // 3: approving the node's CSRs
      await cutWhen('mid-CSR', (j) => atOrPast(j, 'csr'));
      // 4: changing the cluster: the first cluster step this agent runs
      const clusterStep = order.find((name) => ['domain', 'pull-secret', 'mirrors', 'trust', 'settle'].includes(name));
      if (clusterStep) await cutWhen('mid-cluster-changes', (j) => atOrPast(j, clusterStep));
      else t.diagnostic('this agent runs no cluster step: no power cut mid-cluster-changes');
      t.diagnostic(`power cuts: ${JSON.stringify(cuts)}`);

      // the last boot: it must finish
      await node.boot();
      await node.waitForSuccess();
      // the same end state as the uninterrupted run of scenario 1
      const end = await node.endState();
      const reference = await referenceEndState;
      assert.deepEqual(end, reference);

      // the interrupted checkpoint was never committed twice; the network ends committed
      const calls = node.nmstateCalls().filter((c) => c !== 'show');
      t.diagnostic(`nmstatectl calls: ${calls.join(', ')}`);
      assert.equal(calls.filter((c) => c === 'commit').length, 1, `nmstatectl calls: ${calls.join(', ')}`);
      assert.equal(calls[calls.length - 1], 'commit', `nmstatectl calls: ${calls.join(', ')}`);
      const report = JSON.parse(m.readFile('/var/lib/sno-reconfigure/report.json')) as { changes: unknown[] };
      const keys = report.changes.map((c) => JSON.stringify(c));
      assert.equal(new Set(keys).size, keys.length, `no change recorded twice: ${keys.join('\n')}`);

      // each boot resumed without a failure of its own: no error logged (a power cut is not an error of the
      // agent), one start per boot, and only the steps cut in the middle ran twice
      const errors = (await m.journalctl('-q', '-u', UNIT_NAME, '-p', 'err', '-o', 'short-monotonic')).stdout;
      assert.equal(errors, '', `errors logged across the boots:\n${errors}`);
      const journal = JSON.parse(m.readFile('/var/lib/sno-reconfigure/journal.json')) as AgentJournal;
      assert.equal(journal.phase, 'succeeded');
      // The network cut lands in the early network phase at boot, before the agent starts: no start of that boot.
      const beforeAgent = cuts.filter((c) => c.at === 'network apply').length;
      assert.equal(journal.starts, cuts.length + 1 - beforeAgent, 'one start per boot the agent reached');
      const attempts = Object.fromEntries(Object.entries(journal.steps).map(([k, v]) => [k, v.attempts]));
      const expected = Object.fromEntries(Object.keys(journal.steps).map((k) => [k, cuts.some((c) => c.step === k) ? 2 : 1]));
      assert.deepEqual(attempts, expected);
    });
  });
});
