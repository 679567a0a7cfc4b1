// Reliability matrix, API faults (issue #8): as each cluster step starts, the simulated API misbehaves —
// a burst of 503s, connection resets, a storm of 409 Conflicts on every write, or an outage of 10 simulated
// minutes (not listening). Four runs cover every (step, fault) pair once (a Latin square: in run r, the
// i-th cluster step meets fault (i + r) mod 4). Each run must complete in ONE start (no restart by systemd),
// within its deadlines, with the uninterrupted run's end state, and the outages must be reported (a warning
// in the log, or the systemd STATUS line).
//
// Waits are events with deadlines sized for a loaded machine: at load 35 a fault-free stretch of a run took
// 90 s (the stand-in network alone 27 s) and the agent went 5 s without a request, so a run is "hung" only
// when it is silent for minutes, and an outage lasts until the agent has met and reported it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StepName } from '../../../src/engine/step';
import { parseLogs, type Scenario } from '../../support/scenario';
import { agentSteps, CLUSTER_STEPS, convergenceProblems, duplicateProblems, networkProblems, newScenario, stepStartLine } from './support';
import { summaryLine } from './summary';

/** Slower than the other reliability tests, so that a 10-minute outage lasts 3 real seconds. */
const SCALE = 0.005;
const FAULTS = ['503-burst', 'connection-resets', '409-storm', 'outage-10min'] as const;
type Fault = (typeof FAULTS)[number];
/** Real duration of each fault window (an outage's is its shortest: see OUTAGE_MAX_MS). */
const WINDOW_MS: Record<Fault, number> = { '503-burst': 1000, 'connection-resets': 1000, '409-storm': 1000, 'outage-10min': Math.round(10 * 60_000 * SCALE) };
/**
 * An outage ends once the agent has reported it (the window's events, not its clock: on a loaded machine the
 * agent can spend the whole 3 s between two requests and never meet it), but no later than this; an outage
 * still unreported then is a failure.
 */
const OUTAGE_MAX_MS = 60_000;
/** A start silent this long is stuck (it logs every retry and every wait); it is killed and not restarted. */
const HANG_SILENCE_MS = 180_000;
/** A start that takes longer is stuck, however chatty (15-30 s idle; 90 s and more at load 35). */
const RUN_DEADLINE_MS = 600_000;
const MAX_STARTS = 4;
/**
 * A report may follow the end of the window by the agent's next retry, and by as long as a loaded machine
 * keeps the agent from logging the answer it got (5 s and more at load 35); it still has to come before the
 * next window of the same fault, so that window's report cannot stand in for it.
 */
const REPORT_SLACK_MS = 30_000;

interface Injected {
  step: StepName;
  fault: Fault;
  from: number;
  to: number;
}

/** API trouble the agent reported since `since` (a warning or error in its log, or its systemd STATUS line). */
function reportsSince(s: Scenario, out: string, since: number): { at: number; text: string }[] {
  const statusLines = s.node.calls('systemd-notify').map((c) => ({ at: c.time, text: c.args.join(' ') }));
  return [
    ...parseLogs(out)
      .filter((l) => l.level === 'warn' || l.level === 'error')
      .map((l) => ({ at: Date.parse(String(l.time)), text: `${l.msg} ${String(l.err ?? '')}` })),
    ...statusLines,
  ].filter((r) => r.at >= since && API_TROUBLE.test(r.text));
}

/** Resolves once `met()` holds, polled every 200 ms, or at `deadlineMs` (real). */
async function until(met: () => boolean, deadlineMs: number): Promise<void> {
  while (!met() && Date.now() < deadlineMs) await new Promise((r) => setTimeout(r, 200));
}

/** Injects the fault; resolves with the real time its window closed (or will close, for the timed ones). */
async function inject(s: Scenario, fault: Fault, from: number, reported: () => boolean): Promise<number> {
  const simMs = (ms: number) => Math.round(ms / SCALE);
  switch (fault) {
    case '503-burst':
      await s.sim.applyFaults({ apiUnavailableForMs: simMs(WINDOW_MS[fault]) });
      return from + WINDOW_MS[fault];
    case 'connection-resets':
      await s.sim.applyFaults({ apiResetForMs: simMs(WINDOW_MS[fault]) });
      return from + WINDOW_MS[fault];
    case '409-storm':
      // Every write, whoever makes it, answered 409 Conflict for the window.
      s.sim.api.faults.conflictsOnNextWrites = 1_000_000;
      setTimeout(() => (s.sim.api.faults.conflictsOnNextWrites = 0), WINDOW_MS[fault]);
      return from + WINDOW_MS[fault];
    case 'outage-10min': {
      // apiNeverUp holds the API down even if the cluster would bring it up meanwhile (the API start).
      await s.sim.applyFaults({ apiNeverUp: true });
      await until(() => Date.now() - from >= WINDOW_MS[fault] && reported(), from + OUTAGE_MAX_MS);
      await s.sim.applyFaults({ apiNeverUp: false });
      return Date.now();
    }
  }
}

const API_TROUBLE = /not available|unavailable|could not be reached|interrupted|reset|refused|ECONN|503|waiting for the API|watch (ended|failed)/i;

interface RunOutcome {
  injected: Injected[];
  problems: string[];
  unreported: Injected[];
  lost: string[];
  failedAt?: string;
  converged: boolean;
}

async function runWithFaults(round: number, steps: StepName[]): Promise<RunOutcome> {
  const s = await newScenario({ timeScale: SCALE, poweredOn: true });
  try {
    const plan = steps.map((step, i) => ({ step, fault: FAULTS[(i + round) % FAULTS.length]! }));
    const injected: Injected[] = [];
    const pending = [...plan];
    let out = '';
    let stderr = '';
    let injecting = Promise.resolve();
    // As systemd would (Restart=on-failure), a failed start is followed by another one, so that every pair
    // is exercised and convergence checked; but only a run that needed no restart rode through.
    const starts: { code: number | null; signal: NodeJS.Signals | null; out: string; killedFor: string }[] = [];
    while (starts.length < MAX_STARTS && starts[starts.length - 1]?.code !== 0 && !starts[starts.length - 1]?.signal) {
      const child = s.spawnRun([], { NOTIFY_SOCKET: '/run/systemd/notify' });
      let mine = '';
      const startedAt = Date.now();
      let lastOutputAt = startedAt;
      let killedFor = '';
      child.stdout!.on('data', (d: Buffer) => {
        mine += d.toString();
        out += d.toString();
        while (pending.length > 0 && mine.includes(stepStartLine(pending[0]!.step))) {
          const { step, fault } = pending.shift()!;
          injecting = injecting.then(async () => {
            const from = Date.now();
            const to = await inject(s, fault, from, () => reportsSince(s, out, from).length > 0);
            injected.push({ step, fault, from, to });
          });
        }
        lastOutputAt = Date.now();
      });
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const watchdog = setInterval(() => {
        if (killedFor) return; // killed already: what it still flushes does not revive it
        const now = Date.now();
        killedFor = now - lastOutputAt > HANG_SILENCE_MS ? `silent for ${HANG_SILENCE_MS / 1000} s` : now - startedAt > RUN_DEADLINE_MS ? `still running after ${RUN_DEADLINE_MS / 1000} s` : '';
        if (killedFor) child.kill('SIGKILL');
      }, 1000);
      starts.push(await new Promise((resolve) => child.on('exit', (c, sig) => resolve({ code: c, signal: sig, out: mine, killedFor }))));
      clearInterval(watchdog);
      await injecting;
    }
    const code = starts[starts.length - 1]!.code;
    // Let a window still open at the end close before the end state is read.
    await new Promise((r) => setTimeout(r, Math.max(0, ...injected.map((i) => i.to - Date.now()))));

    const problems: string[] = [];
    let failedAt: string | undefined;
    if (starts[0]!.code !== 0) {
      const first = parseLogs(starts[0]!.out);
      const err = first.filter((l) => l.level === 'error').pop();
      failedAt = err ? `${String(err.step ?? '?')}: ${err.msg}` : starts[0]!.signal ? `killed, ${starts[0]!.killedFor || 'by a signal'} (hung); last: ${first[first.length - 1]?.msg ?? ''}` : `exit ${starts[0]!.code}`;
      problems.push(`run ${round}: did not complete in one start (${failedAt})${stderr ? `; stderr: ${stderr.slice(-300)}` : ''}; ${code === 0 ? `converged after ${starts.length} starts` : `still not done after ${starts.length} starts`}`);
    }
    if (code === 0) problems.push(...convergenceProblems(s).map((p) => `run ${round}: ${p}`));
    const lost = [...duplicateProblems(s.sim), ...(code === 0 ? networkProblems(s.node.nmstateHistory()) : [])];
    problems.push(...lost.map((p) => `run ${round}: ${p}`));

    // Reporting: every outage (all connections cut), and every 503 burst the agent's own requests met.
    const reports = reportsSince(s, out, 0);
    // The request log is on simulated time: map the window's real ends onto it.
    const simAt = (real: number) => s.sim.clock.now() - (Date.now() - real) / SCALE;
    const agent503 = (i: Injected) => s.sim.api.requests.some((r) => r.user === 'system:admin' && r.status === 503 && r.time >= simAt(i.from) && r.time <= simAt(i.to));
    const mustReport = injected.filter((i) => i.fault === 'outage-10min' || (i.fault === '503-burst' && agent503(i)));
    const nextOfItsKind = (i: Injected) => Math.min(Infinity, ...injected.filter((j) => j.fault === i.fault && j.from > i.from).map((j) => j.from));
    const unreported = code === 0 ? mustReport.filter((i) => !reports.some((r) => r.at >= i.from - 50 && r.at <= Math.min(i.to + REPORT_SLACK_MS, nextOfItsKind(i)))) : [];
    for (const u of unreported) problems.push(`run ${round}: ${u.fault} during ${u.step} was not reported`);
    return { injected, problems, unreported, lost, failedAt, converged: code === 0 && convergenceProblems(s).length === 0 };
  } finally {
    await s.cleanup();
  }
}

test('API faults during each cluster step: the agent rides through in one start and reports the outages', async () => {
  const steps = agentSteps().filter((st) => CLUSTER_STEPS.includes(st));
  assert.ok(steps.length >= 2, `cluster steps: ${steps.join(', ')}`);
  // The four runs at once: most of a run is waiting (a run uses about a fifth of one core).
  const outcomes = await Promise.all(FAULTS.map((_, r) => runWithFaults(r, steps)));

  const tried = outcomes.reduce((n, o) => n + o.injected.length, 0);
  const survived = outcomes.filter((o) => o.problems.length === 0).reduce((n, o) => n + o.injected.length, 0);
  summaryLine(
    'API faults',
    { tried, survived, dataLost: outcomes.filter((o) => o.lost.length > 0).length },
    `${steps.length} cluster steps × ${FAULTS.length} faults in ${FAULTS.length} runs (Latin square); windows ${FAULTS.map((f) => `${f} ${WINDOW_MS[f] / 1000}s`).join(', ')} (an outage until reported, at most ${OUTAGE_MAX_MS / 1000}s) real at time scale ${SCALE}; ${outcomes.filter((o) => o.failedAt).length} of ${outcomes.length} runs needed a restart (${outcomes.filter((o) => o.failedAt && o.converged).length} of them converged after it)`,
  );
  assert.deepEqual(outcomes.flatMap((o) => o.problems), []);
  assert.equal(tried, steps.length * FAULTS.length, 'every (step, fault) pair was injected');
});
