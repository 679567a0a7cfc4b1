// `sno-reconfigure renew-certificates` with the bundled agent, long after a run: nothing is due right after
// it; --force re-issues from the same signers, waits until the cluster serves them, and status, the report
// and the banner name the expiries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import type { Report } from '../../../src/engine/report';
import { BUNDLE_PATH } from '../../support/bundle';
import { demoSiteConfigFiles, signedSiteConfigFiles, startScenario } from '../../support/scenario';

test('after a run: expiries in status, report and banner; renew-certificates renews on --force and is idempotent otherwise', async () => {
  const s = await startScenario();
  try {
    // Asynchronous: the simulator answers from this process, so a blocking spawn would starve it.
    const cli = (...args: string[]) =>
      new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, [BUNDLE_PATH, ...args, '--root', s.node.root], { encoding: 'utf8', env: s.node.env, timeout: 15 * 60_000 }, (err, stdout, stderr) => {
          resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
        });
      });
    const before = await cli('renew-certificates');
    assert.equal(before.status, 1);
    assert.match(before.stderr, /this node has no finished reconfiguration.*nothing to renew yet/);

    // The site asks for the daily renewal timer (shipped disabled in the MachineConfig).
    const files = demoSiteConfigFiles(s.sim);
    const doc = parse(files['site-config.yaml']!) as { spec: Record<string, unknown> };
    doc.spec.certificateRenewal = 'timer';
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { ...files, 'site-config.yaml': stringify(doc) }));
    const run = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(run.code, 0, run.stdout.slice(-2000));
    assert.ok(s.node.calls('systemctl').some((c) => c.args.join(' ') === 'enable --now sno-reconfigure-renew.timer'), 'the renewal timer was enabled');
    const reportFile = path.join(s.node.root, 'var/lib/sno-reconfigure/report.json');
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;
    assert.deepEqual(report.certificates?.map((c) => c.role).sort(), ['api', 'ingress', 'oauth']);
    const status = await cli('status');
    assert.match(status.stdout, /Certificates:\n {2}(api|ingress|oauth) certificate \(.*\) expires \d{4}-\d\d-\d\d/);
    assert.match(status.stdout, /renew-certificates/);
    const banner = readFileSync(path.join(s.node.root, 'etc/issue.d/50-sno-reconfigure.issue'), 'utf8');
    assert.match(banner, /First to expire: the (api|ingress|oauth) certificate .* expires \d{4}-\d\d-\d\d; renew with `sno-reconfigure renew-certificates`/);

    const idle = await cli('renew-certificates');
    assert.equal(idle.status, 0, idle.stderr);
    assert.match(idle.stdout, /^Nothing to renew: no certificate the agent issued is due\./);

    const dry = await cli('renew-certificates', '--force', '--dry-run');
    assert.equal(dry.status, 0, dry.stderr);
    assert.match(dry.stdout, /^Would renew \(nothing was changed\):\n {2}openshift-config\/sno-reconfigure-api-cert: renewal: renewal asked for \(--force\)/);

    const forced = await cli('renew-certificates', '--force');
    assert.equal(forced.status, 0, forced.stdout + forced.stderr);
    assert.match(forced.stdout, /The cluster serves the renewed certificates:/);
    const after = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;
    const notAfter = (r: Report, role: string) => Date.parse(r.certificates?.find((c) => c.role === role)?.notAfter ?? '');
    assert.ok(notAfter(after, 'api') >= notAfter(report, 'api'), 'the report names the renewed API certificate');
    assert.notDeepEqual(after.certificates, report.certificates);
  } finally {
    await s.cleanup();
  }
});
