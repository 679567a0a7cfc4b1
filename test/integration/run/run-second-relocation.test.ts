// A second relocation end to end (issue 41): a node installed at the factory, relocated to store 42 with store
// 42's stick, then — a year later — to store 77 with store 77's stick. Between the two, what the agent asks for
// ("remove the marker to run again", src/engine/runner.ts): the done marker removed, the old stick pulled.
// The second run must leave the cluster as a first relocation to store 77 would: store 77's names served by
// certificates for them alone, store 77's pull secret and mirrors beside store 42's, the pool unpaused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import { sanDnsNames } from '../../../src/certs/verify';
import { DEFAULT_STATE_DIR, DONE_MARKER, STATE_FILES } from '../../../src/paths';
import { SECRETS } from '../../../src/steps/domain/names';
import { signedSiteConfigFiles, siteConfigFor } from '../../support/scenario';
import { convergenceProblems, duplicateProblems, newScenario, runUntilDone, siteExtras } from '../reliability/support';

const storeSpec = (store: string) => ({
  pullSecret: { auths: { [`registry.${store}.example.com:8443`]: { auth: Buffer.from(`${store}:not-a-real-password`).toString('base64') } } },
  imageDigestMirrors: [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: [`registry.${store}.example.com:8443/ocp/release`] }],
});

test('factory → store 42 → store 77, each with its own stick: the second relocation ends as the first did, for store 77 alone', { timeout: 20 * 60_000 }, async () => {
  const s = await newScenario();
  try {
    const { sim, node } = s;
    const secret = (name: string) => sim.store.get(R.secrets, name, 'openshift-config') as (KubeObject & { data?: Record<string, string> }) | undefined;
    const apiNames = () => sanDnsNames(new X509Certificate(Buffer.from(secret(SECRETS.api)?.data?.['tls.crt'] ?? '', 'base64').toString()));

    // newScenario attached store 42's stick (siteExtras: a pull secret, mirrors, a registry CA).
    await runUntilDone(s);
    assert.deepEqual(convergenceProblems(s), []);
    assert.deepEqual(apiNames(), ['api.sno1.store42.example.com']);

    // The run's own records are forgotten (a re-run or the next relocation starts them afresh).
    assert.equal(existsSync(path.join(node.root, DEFAULT_STATE_DIR, 'rollouts.json')), false);
    rmSync(path.join(node.root, DONE_MARKER));
    node.detachVolume('sdb1');
    node.attachVolume('sdc1', 'SITE-CONFIG', signedSiteConfigFiles(node.root, {
      'site-config.yaml': siteConfigFor(sim, { name: 'store-0077', baseDomain: 'store77.example.com', extraSpec: { ...siteExtras(sim), ...storeSpec('store77') } }),
    }, { issued: '2026-11-20T09:00:00Z' }));
    const { runs } = await runUntilDone(s);
    assert.deepEqual(convergenceProblems(s), []);
    assert.deepEqual(duplicateProblems(sim), []);
    assert.match(runs.at(-1)!.stdout, /site-config \\"store-0077\\" applied: reconfiguration complete/);

    const report = JSON.parse(readFileSync(path.join(node.root, DEFAULT_STATE_DIR, STATE_FILES.report), 'utf8')) as { siteConfig?: { name?: string }; result?: string };
    assert.equal(report.result, 'succeeded');
    assert.equal(JSON.stringify(report).includes('store-0077'), true, 'the report is the second relocation\'s');
    // Store 77's names, served by certificates for them alone.
    assert.deepEqual(apiNames(), ['api.sno1.store77.example.com']);
    const apiserver = sim.store.get(R.apiServers, 'cluster') as KubeObject & { spec?: { servingCerts?: { namedCertificates?: { names?: string[] }[] } } };
    const named = (apiserver.spec?.servingCerts?.namedCertificates ?? []).flatMap((n) => n.names ?? []);
    assert.ok(named.includes('api.sno1.store77.example.com'), `namedCertificates: ${named.join(', ')}`);
    assert.ok(!named.includes('api.sno1.store42.example.com'), `store 42's API name is still served: ${named.join(', ')}`);
    const ingress = sim.store.get(R.ingresses, 'cluster') as KubeObject & { spec?: { appsDomain?: string } };
    assert.equal(ingress.spec?.appsDomain, 'apps.sno1.store77.example.com');
    // The pull secret merges: store 77's registry beside store 42's (merge mode keeps what was there).
    const pull = sim.store.get(R.secrets, 'pull-secret', 'openshift-config') as KubeObject & { data?: Record<string, string> };
    const auths = Object.keys((JSON.parse(Buffer.from(pull.data?.['.dockerconfigjson'] ?? '', 'base64').toString()) as { auths: Record<string, unknown> }).auths);
    assert.ok(auths.includes('registry.store77.example.com:8443'), auths.join(', '));
  } finally {
    await s.cleanup();
  }
});
