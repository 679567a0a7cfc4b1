// spec.proxy through whole runs against the simulator, whose network operator's proxy controller is a
// transcription of cluster-network-operator's (test/sim/cluster/operators/network-proxy.ts): the site's proxy
// lands in Proxy/cluster with a CA bundle that keeps the CAs the cluster trusted before, the operator's
// noProxy is the one `plan` announced, the pool rolls out with one reboot and settle waits for it, the
// proxy's password is in no output, and a proxy the operator refuses stops the run with its message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { R } from '../../../src/cluster/resources';
import { splitCertificates } from '../../../src/certs/pem';
import { createCa } from '../../sim/pki';
import { signedSiteConfigFiles, siteConfigFor, startScenario } from '../../support/scenario';
import { BUNDLE_PATH } from '../../support/bundle';

const PASSWORD = 'Pr0xy-s3cret-42';
const PROXY = { httpProxy: `http://store42:${PASSWORD}@proxy.store42.example.com:3128`, httpsProxy: `http://store42:${PASSWORD}@proxy.store42.example.com:3128`, noProxy: ['.store42.example.com', '10.20.0.0/16'], trustedCAFile: 'proxy-ca.pem' };

/** Every file under `dir`. */
const allFiles = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(dir, f))
    .filter((f) => statSync(f).isFile());

test('spec.proxy: Proxy/cluster, a merged CA bundle, the operator noProxy plan announced, one reboot, no password anywhere', async () => {
  const s = await startScenario();
  try {
    let reboots = 0;
    s.sim.events.on('reboot', (e: { phase: string }) => { if (e.phase === 'down') reboots++; });
    // The factory's cluster trusts a CA for its proxy already (install-config additionalTrustBundle → user-ca-bundle).
    const factoryCa = createCa('factory proxy CA');
    s.sim.store.create(R.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'user-ca-bundle', namespace: 'openshift-config' }, data: { 'ca-bundle.crt': factoryCa.certPem } });
    const factoryProxy = s.sim.store.get(R.proxies, 'cluster')!;
    s.sim.store.update(R.proxies, { ...factoryProxy, spec: { trustedCA: { name: 'user-ca-bundle' } } });
    const siteCa = createCa('store42 proxy CA');
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { proxy: PROXY } }), 'proxy-ca.pem': siteCa.certPem }));
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));

    const proxy = s.sim.store.get(R.proxies, 'cluster') as { spec: Record<string, unknown>; status: { httpProxy: string; httpsProxy: string; noProxy: string } };
    assert.deepEqual(proxy.spec, { httpProxy: PROXY.httpProxy, httpsProxy: PROXY.httpsProxy, noProxy: '.store42.example.com,10.20.0.0/16,sno1.factory.example.com,sno1.store42.example.com', trustedCA: { name: 'sno-reconfigure-proxy-ca' } });
    const expectedNoProxy = `.cluster.local,.store42.example.com,.svc,10.128.0.0/14,10.20.0.0/16,127.0.0.1,172.30.0.0/16,192.168.111.0/24,api-int.sno1.factory.example.com,localhost,sno1.factory.example.com,sno1.store42.example.com`;
    assert.equal(proxy.status.noProxy, expectedNoProxy, "the network operator's merged noProxy");
    const change = (JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/report.json'), 'utf8')) as { changes: { kind: string; detail?: string }[] }).changes.find((c) => c.kind === 'Proxy');
    assert.equal(change?.detail, `httpProxy http://***@proxy.store42.example.com:3128, httpsProxy http://***@proxy.store42.example.com:3128; not through the proxy: ${expectedNoProxy} (the node's own names are added so that the cluster's checks of its routes go direct); the node reboots once to apply it`);

    const bundle = (s.sim.store.get(R.configMaps, 'sno-reconfigure-proxy-ca', 'openshift-config') as { data: Record<string, string> }).data['ca-bundle.crt']!;
    assert.deepEqual(splitCertificates(bundle).map((b) => b.replace(/\s+/g, '')), [factoryCa.certPem, siteCa.certPem].map((p) => p.replace(/\s+/g, '')), 'the CA the cluster trusted before, then the site CA');
    assert.equal((s.sim.store.get(R.configMaps, 'trusted-ca-bundle', 'openshift-config-managed') as { data: Record<string, string> }).data['ca-bundle.crt'], bundle, 'the operator merged it for pods');
    assert.equal(reboots, 1, 'the machine-config daemon reboots once for /etc/mco/proxy.env');

    const backup = JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/backups/proxy-cluster.json'), 'utf8')) as { spec: unknown };
    assert.deepEqual(backup.spec, { trustedCA: { name: 'user-ca-bundle' } });

    // The password is in the Proxy (the cluster needs it) and in the site-config's own copy, nowhere else.
    const status = spawnSync(process.execPath, [BUNDLE_PATH, 'status', '--root', s.node.root], { encoding: 'utf8' });
    assert.deepEqual([res.stdout, res.stderr, status.stdout, status.stderr].filter((t) => t.includes(PASSWORD)).length, 0, 'the proxy password is in no output');
    const stateDir = path.join(s.node.root, 'var/lib/sno-reconfigure');
    const leaking = allFiles(stateDir).filter((f) => !path.relative(stateDir, f).startsWith('site-config') && readFileSync(f, 'utf8').includes(PASSWORD));
    assert.deepEqual(leaking, [], 'no state file but the site-config copy holds the proxy password');
    assert.ok(readFileSync(path.join(s.node.root, 'etc/issue.d/50-sno-reconfigure.issue'), 'utf8').length > 0 && !readFileSync(path.join(s.node.root, 'etc/issue.d/50-sno-reconfigure.issue'), 'utf8').includes(PASSWORD));

    // A second run finds everything in place and writes neither object again.
    rmSync(path.join(s.node.root, 'etc/sno-reconfigure/done'));
    const before = s.sim.api.requests.length;
    const again = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(again.code, 0, again.stdout.slice(-3000));
    assert.deepEqual(s.sim.api.requests.slice(before).filter((r: { method: string; path: string }) => r.method !== 'GET' && /proxies|sno-reconfigure-proxy-ca/.test(r.path)).map((r: { method: string; path: string }) => `${r.method} ${r.path}`), [], 'no second write');
  } finally {
    await s.cleanup();
  }
});

// Issue 29 items 1 and 2 — a proxy at the head office that resolves with the site's DNS, which knows neither the
// factory domain (the 4.14+ canary's host) nor the node's new names, so the node's own names in noProxy keep every
// check direct — run as the long path of the version matrix on 4.16, 4.18, 4.20 and 4.22
// (version-matrix.test.ts, with the full site-config).

test('a proxy the network operator refuses (a factory readiness endpoint the site cannot reach) stops the run with its message', async () => {
  const s = await startScenario();
  try {
    // The factory set a readiness endpoint the site cannot reach through its proxy.
    const factoryProxy = s.sim.store.get(R.proxies, 'cluster')!;
    s.sim.store.update(R.proxies, { ...factoryProxy, spec: { trustedCA: { name: '' }, readinessEndpoints: ['https://www.redhat.com'] } });
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { proxy: { httpsProxy: 'http://proxy.store42.example.com:3128' } } }) }));
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.notEqual(res.code, 0);
    assert.match(res.stdout, /the network operator refused the proxy: The configuration is invalid for proxy 'cluster' \(readinessEndpoint probe failed for endpoint 'https:\/\/www\.redhat\.com'/);
    assert.match(res.stdout, /Correct spec\.proxy in the site-config/);
  } finally {
    await s.cleanup();
  }
});

// Issue 29 item 2: without spec.proxy, a proxy the factory set stays; plan says when the node's own names are
// not in its noProxy (the cluster then checks its routes through it).
test("plan without spec.proxy: a factory proxy whose noProxy lacks the node's own names is named", async () => {
  const s = await startScenario();
  try {
    s.sim.startKubelet();
    await s.sim.waitFor(() => s.sim.apiUp(), 60_000, 'API up');
    // The Proxy rolls the pool out with a reboot, as at the factory: plan once the API is back.
    let rolledOut = false;
    s.sim.events.on('rollout', (e: { operator: string; phase: string }) => { if (e.operator === 'machine-config' && e.phase === 'done') rolledOut = true; });
    const proxy = s.sim.store.get(R.proxies, 'cluster')!;
    s.sim.store.update(R.proxies, { ...proxy, spec: { ...(proxy.spec ?? {}), httpsProxy: 'http://proxy.factory.example.com:3128', noProxy: '.factory.example.com' } });
    await s.sim.waitFor(() => rolledOut && s.sim.apiUp(), 120_000, 'the factory proxy rolled out');
    const dir = path.join(s.node.dir, 'plan-config');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'site-config.yaml'), siteConfigFor(s.sim));
    // Asynchronously: the simulator answers from this very process.
    const out = await new Promise<string>((resolve) => {
      const child = spawn(process.execPath, [BUNDLE_PATH, 'plan', dir, ...s.agentArgs], { env: s.node.env });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.on('exit', () => resolve(text));
    });
    assert.match(out, /leave Proxy cluster — the factory's proxy \(http:\/\/proxy\.factory\.example\.com:3128\) stays, and its noProxy does not name sno1\.factory\.example\.com, sno1\.store42\.example\.com: ingress \(4\.14\+\), authentication and console check the node's routes through it; give spec\.proxy, which adds them/);
  } finally {
    await s.cleanup();
  }
});
