import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { R } from '../../../src/cluster/resources';
import { titleOf } from '../reliability/support';
import { STEPS } from '../../../src/steps/index';
import { readStatus } from '../../../src/engine/status';
import { LocalHost } from '../../../src/host/host';
import { DEFAULT_STATE_DIR, DONE_MARKER } from '../../../src/paths';
import type { StepName } from '../../../src/engine/step';
import { startScenario, siteConfigFor, type Scenario } from '../../support/scenario';

let s: Scenario;
before(async () => {
  s = await startScenario();
});
after(async () => {
  await s?.cleanup();
});

/** Starts the agent and SIGKILLs it (a power cut, for the agent) once `when` holds. */
async function killWhen(when: (out: string) => boolean, label: string): Promise<string> {
  const child: ChildProcess = s.spawnRun();
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (when(out)) {
        clearInterval(timer);
        child.kill('SIGKILL');
      }
    }, 20);
    child.on('exit', (code, signal) => {
      clearInterval(timer);
      if (signal === 'SIGKILL') resolve();
      else reject(new Error(`agent exited (${code}) before the kill point "${label}"\n${out.slice(-3000)}`));
    });
  });
  return out;
}

const phaseStarted = (step: StepName) => (out: string) => out.includes(`"msg":"${titleOf(step)}"`);

test('killed at every step boundary and mid-step, the agent resumes and converges to the same end state', async () => {
  s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
  // mid-network: the change journaled as pending for the next boot and `systemctl reboot` in flight; then a power cut,
  // whose boot runs the early network phase (it applies, verifies and commits the site network).
  const releaseReboot = s.node.hold('systemctl-reboot');
  await killWhen(() => s.node.calls('systemctl').some((c) => c.args[0] === 'reboot'), 'network: the reboot asked for');
  releaseReboot();
  while (!s.node.rebootRequested()) await new Promise((r) => setTimeout(r, 20));
  s.node.powerCycle();
  await killWhen(phaseStarted('kubelet'), 'kubelet');
  await killWhen(phaseStarted('api'), 'api');
  await killWhen((out) => /"msg":"approved CSR /.test(out), 'csr: first approval');
  // In the finish step, after the done marker (the commit point), while `systemctl disable` hangs: the journal
  // still says "running" and the unit stays enabled — the marker's ConditionPathExists=! keeps it from starting.
  const release = s.node.hold('systemctl-disable');
  const markerFile = path.join(s.node.root, DONE_MARKER);
  await killWhen(() => existsSync(markerFile) && s.node.calls('systemctl').some((c) => c.args.includes('disable')), 'finish: marker written, disabling');
  s.node.fail('systemctl-disable', 'power cut');
  release();
  const stale = JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/journal.json'), 'utf8'));
  assert.equal(stale.phase, 'running', 'the journal is one save behind the marker');
  const view = await readStatus(new LocalHost({ root: s.node.root }), DEFAULT_STATE_DIR, DONE_MARKER, STEPS);
  assert.equal(view.phase, 'succeeded', '`status` takes the marker\'s word');
  assert.equal(view.steps.find((st) => st.name === 'finish')?.state, 'done');

  // Started again by hand (systemd would not: the marker), the agent brings the journal up to date, nothing else.
  const res = await s.run([], { timeoutMs: 15 * 60_000 });
  assert.equal(res.code, 0, `${res.stdout.slice(-3000)}\n${res.stderr}`);
  assert.match(res.stdout, /the last run was cut off right after its done marker/);

  // The network change was made once, at the boot after the cut.
  assert.deepEqual(s.node.nmstateHistory(), ['apply --no-commit', 'commit']);
  const journal = JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/journal.json'), 'utf8'));
  assert.equal(journal.phase, 'succeeded');
  assert.equal(journal.starts, 5, 'one start per boot of the agent that ran steps');
  assert.equal(journal.steps.network.attempts, 2);
  assert.equal(journal.steps.kubelet.attempts, 2, 'kubelet step re-run after being killed at its start');
  // No step that was done ran again.
  assert.equal(journal.steps.network.state, 'done');
  const report = JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/report.json'), 'utf8'));
  assert.equal(report.result, 'succeeded');
  const keys = report.changes.map((c: unknown) => JSON.stringify(c));
  assert.equal(new Set(keys).size, keys.length, 'no change recorded twice');
  // Same end state as an uninterrupted run.
  const node = s.sim.store.get(R.nodes, s.sim.options.nodeName) as { status?: { conditions?: { type: string; status: string }[] } };
  assert.equal(node.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  assert.equal(s.node.units()['kubelet.service']?.active, 'active');
  assert.equal(s.node.units()['sno-reconfigure.service']?.enabled, 'enabled', 'the disable was cut off; the marker keeps the unit from running');
});
