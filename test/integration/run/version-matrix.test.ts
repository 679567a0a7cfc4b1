// The agent on each OpenShift release the simulator models (issue 15 item 6, issue 37). What differs between releases
// and matters to the agent is carried by the simulator's version (test/sim/cluster/README.md "Per release";
// docs/releases.md has the upstream sources): the mirror API (ICSP below 4.13, IDMS from 4.13), the bootstrap CSR
// groups, the canary route under the installed domain from 4.14, the node-kubeconfig lifetimes.
//   - The demo relocation (network, domain, pull secret, digest and tag mirrors, registry CA) on every supported
//     release 4.14–4.22, and on 4.12, which the simulator still models for its ICSP-only mirrors (4.13 differs from
//     4.14 only in what the simulator tests on its own: test/integration/sim/, steps/csr.test.ts).
//   - The long path — the full site-config (NTP, a proxy that cannot reach the node, SSH keys, trust bundle, labels,
//     kubeadmin, extra manifests with a MachineConfig) with its one reboot — on 4.16, 4.18, 4.20 and 4.22; the
//     image-based media run on the same releases (run-image-based.test.ts).
// Each run is its own simulator and node. Three at a time: half of a run is the agent waiting on the simulated
// cluster (kubelet, CSRs, rollouts, the stability window), which the others fill.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { R } from '../../../src/cluster/resources';
import type { Report } from '../../../src/engine/report';
import { MIRROR_OBJECT_NAME } from '../../../src/steps/mirrors';
import { demoSiteConfigFiles, signedSiteConfigFiles, startScenario } from '../../support/scenario';
import { LONG_PATH_RELEASES, SUPPORTED_RELEASES, UNSUPPORTED_MODELLED_RELEASES } from '../../support/releases';
import { countRelocation, fullSiteConfigFiles } from '../../support/site-configs';

const minor = (version: string) => Number(version.split('.')[1]);

const readReport = (root: string) => JSON.parse(readFileSync(path.join(root, 'var/lib/sno-reconfigure/report.json'), 'utf8')) as Report;

describe('the demo relocation on each OpenShift release', { concurrency: 3 }, () => {
  for (const version of [UNSUPPORTED_MODELLED_RELEASES[0], ...SUPPORTED_RELEASES]) {
    test(`OpenShift ${version}: a full run to done, the report names the version`, async () => {
      const s = await startScenario({ sim: { version } });
      try {
        s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, demoSiteConfigFiles(s.sim, { settleStability: '2s' })));
        const run = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
        assert.equal(run.code, 0, run.stdout.slice(-3000) + run.stderr.slice(-2000));
        const report = readReport(s.node.root);
        assert.equal(report.result, 'succeeded');
        assert.equal(report.cluster.version, version);
        if (minor(version) < 13) {
          // 4.12: ICSP only (openshift/api config/v1 types_image_digest_mirror_set.go came with 4.13).
          assert.ok(s.sim.store.get(R.imageContentSourcePolicies, MIRROR_OBJECT_NAME), "the site's mirrors as an ImageContentSourcePolicy");
          assert.throws(() => s.sim.store.list(R.imageDigestMirrorSets), 'no IDMS API on 4.12');
        } else {
          // ICSP is still served up to 4.23 (docs/releases.md), but the agent writes IDMS/ITMS from 4.13.
          assert.ok(s.sim.store.get(R.imageDigestMirrorSets, MIRROR_OBJECT_NAME), "the site's mirrors as an ImageDigestMirrorSet");
          assert.equal(s.sim.store.get(R.imageContentSourcePolicies, MIRROR_OBJECT_NAME), undefined);
          assert.ok(s.sim.store.get(R.imageTagMirrorSets, MIRROR_OBJECT_NAME), 'the catalogs pulled by tag are mirrored (ImageTagMirrorSet, 4.13+)');
          assert.deepEqual(report.warnings.filter((w) => w.includes('CatalogSource')), [], 'no catalog is left pulling by tag without a mirror');
        }
      } finally {
        await s.cleanup();
      }
    });
  }
});

// The proxy resolves with the site's DNS, which knows neither the factory domain (the 4.14+ canary's host) nor the
// node's new names: the agent's noProxy entries keep the ingress, authentication and console checks direct
// (issue 29). Every pool input lands in one rendered config: one rollout, one reboot (issue 31).
describe('the full site-config with a site proxy on the long-path releases', { concurrency: 2 }, () => {
  for (const version of LONG_PATH_RELEASES) {
    test(`OpenShift ${version}: one pool rollout, one reboot, one kube-apiserver revision; the cluster settles behind a proxy that cannot reach the node`, async () => {
      const s = await startScenario({ sim: { version, proxyReachesNode: false } });
      try {
        s.node.attachVolume('sdb1', 'SITE-CONFIG', fullSiteConfigFiles(s.sim, s.node.root));
        const counter = countRelocation(s.sim);
        const run = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
        counter.stop();
        assert.equal(run.code, 0, run.stdout.slice(-3000) + run.stderr.slice(-2000));
        assert.equal(readReport(s.node.root).cluster.version, version);
        assert.deepEqual(counter.counts, { reboots: 1, poolRollouts: 1, kubeApiserverRevisions: 1 });
        const rendered = (s.sim.store.get(R.machineConfigPools, 'master')?.status as { configuration?: { source?: { name: string }[] } }).configuration?.source?.map((x) => x.name) ?? [];
        for (const mc of ['99-master-ssh', '99-master-chrony', '50-master-store-motd']) assert.ok(rendered.includes(mc), `${mc} is in the pool's rendered config (${rendered.join(', ')})`);
        assert.notEqual((s.sim.store.get(R.machineConfigPools, 'master')?.spec as { paused?: boolean }).paused, true, 'the pool is not paused after the run');
        const noProxy = (s.sim.store.get(R.proxies, 'cluster') as { spec: { noProxy: string } }).spec.noProxy.split(',');
        assert.ok(noProxy.includes('sno1.factory.example.com'), `the installed names go direct (noProxy ${noProxy.join(',')})`);
        for (const co of ['ingress', 'authentication', 'console']) {
          const conditions = ((s.sim.store.get(R.clusterOperators, co)?.status ?? {}) as { conditions?: { type: string; status: string }[] }).conditions ?? [];
          assert.equal(conditions.find((c) => c.type === 'Degraded')?.status, 'False', `${co} is not Degraded`);
        }
      } finally {
        await s.cleanup();
      }
    });
  }
});
