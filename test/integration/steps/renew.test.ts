// Renewing what the domain step issued, over two simulated years (issue 15 item 2): nothing is due early on,
// a certificate past 80 % of its lifetime is issued anew from the same signer, and a renewal right after
// writes nothing. The run's clock is moved forward; the simulator's signers stay as they are.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { startSimulator, type Simulator } from '../../sim/index';
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import type { StepContext } from '../../../src/engine/step';
import { domainStep, renewDomainCertificates } from '../../../src/steps/domain/index';
import { SECRETS } from '../../../src/steps/domain/names';
import { createHarness, writesIn } from './harness';

const DAY = 86_400_000;

function leaf(sim: Simulator, name: string): X509Certificate {
  const s = sim.store.get(R.secrets, name, 'openshift-config') as KubeObject & { data?: Record<string, string> };
  return new X509Certificate(Buffer.from(s.data?.['tls.crt'] ?? '', 'base64').toString('utf8'));
}

/** The same step context, its clock `days` ahead. */
function after(ctx: StepContext, days: number): StepContext {
  return { ...ctx, clock: { now: () => ctx.clock.now() + days * DAY, sleep: (ms, s) => ctx.clock.sleep(ms, s) } };
}

describe('renew-certificates over two simulated years', () => {
  test('not due at one year; past 80 % of their 825 days renewed from the same signer; a second renewal writes nothing', async () => {
    // The renewal restarts kube-apiserver at the end of the revision it starts: an hour of simulated time (3.6 s
    // real) lets its writes finish first on a loaded machine, where the default 6 minutes (0.36 s real) did not.
    const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running', durations: { kubeApiserverRollout: 60 * 60_000 } });
    const h = await createHarness(sim);
    try {
      assert.equal(await h.run(domainStep), 'applied');
      // The rollouts this starts restart the API; renewing is for long after them.
      await sim.waitFor(() => sim.snapshot().rollouts.length === 0 && sim.apiUp(), 5 * 60_000, 'the rollouts of the run');
      const first = leaf(sim, SECRETS.api);
      const lifetimeDays = (Date.parse(first.validTo) - Date.parse(first.validFrom)) / DAY;
      assert.ok(lifetimeDays > 800, `the API certificate lasts ${lifetimeDays} days`);
      const issued = h.facts.certificates?.find((c) => c.role === 'api');
      assert.equal(issued?.notAfter, new Date(first.validTo).toISOString(), 'the run records the expiry for the report and status');

      sim.api.clearRequests();
      const early = await renewDomainCertificates(after(h.contextFor('domain'), 365), { force: false, dryRun: false });
      assert.deepEqual(early.renewed, []);
      assert.deepEqual(writesIn(sim.api.requests), [], 'nothing is due after one year');

      const late = after(h.contextFor('domain'), Math.ceil(lifetimeDays * 0.8) + 1);
      // All three were issued together for 825 days: all three are due (the ingress one also in openshift-ingress).
      const due = [`openshift-config/${SECRETS.api}`, `openshift-config/${SECRETS.ingress}`, `openshift-config/${SECRETS.oauth}`, `openshift-ingress/${SECRETS.ingress}`];
      const dry = await renewDomainCertificates(late, { force: false, dryRun: true });
      assert.deepEqual(dry.renewed.map((r) => r.secret).sort(), due.sort());
      assert.match(dry.renewed[0]!.reason, /^renewal: 8\d % of its lifetime used/);
      assert.deepEqual(writesIn(sim.api.requests), [], 'a dry run writes nothing');

      const done = await renewDomainCertificates(late, { force: false, dryRun: false });
      assert.deepEqual(done.renewed.map((r) => r.secret).sort(), due.sort());
      const renewed = leaf(sim, SECRETS.api);
      assert.notEqual(renewed.serialNumber, first.serialNumber);
      assert.equal(renewed.issuer, first.issuer, 'from the same signer');
      assert.ok(Date.parse(renewed.validTo) > Date.parse(first.validTo), 'it lasts longer than the one it replaced');
      assert.equal(done.certificates.find((c) => c.role === 'api')?.notAfter, new Date(renewed.validTo).toISOString());

      await sim.waitFor(() => sim.snapshot().rollouts.length === 0 && sim.apiUp(), 5 * 60_000, 'the rollouts of the renewal');
      sim.api.clearRequests();
      const again = await renewDomainCertificates(late, { force: false, dryRun: false });
      assert.deepEqual(again.renewed, []);
      assert.deepEqual(writesIn(sim.api.requests), [], 'renewing twice is renewing once');
    } finally {
      await h.cleanup();
      await sim.stop();
    }
  });
});
