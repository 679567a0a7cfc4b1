// The main end-to-end scenario — the demo's site-config, a full run to done with the bundled agent — against
// each OpenShift version the simulator models (issue 15 item 6). What differs between them and matters to the
// agent is carried by the simulator's version: the mirror API (ICSP below 4.13, IDMS from 4.13), and whatever
// else test/sim/cluster models per version (bootstrap CSR groups, the canary route, credential lifetimes).
// This cheap path runs on every modelled version; the long paths (a site proxy with its reboot, run-proxy.test.ts;
// the image-based media, run-image-based.test.ts) run on the boundary versions only, to keep the suite's time.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { R } from '../../../src/cluster/resources';
import type { Report } from '../../../src/engine/report';
import { MIRROR_OBJECT_NAME } from '../../../src/steps/mirrors';
import { demoSiteConfigFiles, signedSiteConfigFiles, startScenario } from '../../support/scenario';

const VERSIONS = [
  { version: '4.12.30', mirrors: R.imageContentSourcePolicies, not: R.imageDigestMirrorSets },
  // 4.13: the first RHEL 9 node and the first with IDMS/ITMS (config/v1 types_image_digest_mirror_set.go).
  { version: '4.13.30', mirrors: R.imageDigestMirrorSets, not: R.imageContentSourcePolicies },
  { version: '4.14.12', mirrors: R.imageDigestMirrorSets, not: R.imageContentSourcePolicies },
  { version: '4.15.20', mirrors: R.imageDigestMirrorSets, not: R.imageContentSourcePolicies },
  { version: '4.16.8', mirrors: R.imageDigestMirrorSets, not: R.imageContentSourcePolicies },
];

// Two versions at a time: each run is its own simulator and node, and half of a run is the agent waiting on the
// cluster (kubelet, CSRs, rollouts, the stability window), so a second run fills that time instead of the clock.
describe('the demo relocation on each OpenShift version', { concurrency: 2 }, () => {
  for (const v of VERSIONS) {
    test(`OpenShift ${v.version}: a full run to done, the report names the version`, async () => {
      const s = await startScenario({ sim: { version: v.version } });
      try {
        s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, demoSiteConfigFiles(s.sim, { settleStability: '2s' })));
        const run = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
        assert.equal(run.code, 0, run.stdout.slice(-3000) + run.stderr.slice(-2000));
        const report = JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/report.json'), 'utf8')) as Report;
        assert.equal(report.result, 'succeeded');
        assert.equal(report.cluster.version, v.version);
        assert.ok(s.sim.store.get(v.mirrors, MIRROR_OBJECT_NAME), `the site's mirrors as ${v.mirrors.kind}`);
        if (v.version.startsWith('4.12')) assert.throws(() => s.sim.store.list(v.not), 'no IDMS API on 4.12');
        else {
          assert.equal(s.sim.store.get(v.not, MIRROR_OBJECT_NAME), undefined);
          assert.ok(s.sim.store.get(R.imageTagMirrorSets, MIRROR_OBJECT_NAME), 'the catalogs pulled by tag are mirrored (ImageTagMirrorSet, 4.13+)');
          assert.deepEqual(report.warnings.filter((w) => w.includes('CatalogSource')), [], 'no catalog is left pulling by tag without a mirror');
        }
      } finally {
        await s.cleanup();
      }
    });
  }
});
