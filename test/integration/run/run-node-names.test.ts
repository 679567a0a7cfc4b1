// The node's own names at the site (issue 14 item 2): kubelet dials api-int.<cluster>.<installed domain>, so
// before kubelet starts that name must resolve on the node to one of the node's addresses, or the run stops
// before kubelet (the site network, committed at boot, stays); the new names go into the node-local DNS. (Stand-in getent answers from the root's
// /etc/dnsmasq.d records like the node's dnsmasq, and 192.0.2.10 — the site's DNS — for anything else.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { KUBELET_BOOTSTRAP_KUBECONFIG } from '../../../src/paths';
import { INSTALLED_NAMES_CONF, LOCAL_DNS_UNIT, SITE_NAMES_CONF, clusterRecords, dnsmasqRecords } from '../../../src/render/local-dns';
import { startScenario, siteConfigFor, type AgentRun, type Scenario } from '../../support/scenario';

/** The node as the factory left it: kubelet's bootstrap kubeconfig (server = api-int), our DNS unit, and optionally prepare's records. */
function factoryNode(s: Scenario, withInstalledRecords: boolean): void {
  const file = (p: string, text: string) => {
    mkdirSync(path.dirname(path.join(s.node.root, p)), { recursive: true });
    writeFileSync(path.join(s.node.root, p), text);
  };
  const installed = `${s.sim.options.clusterName}.${s.sim.options.baseDomain}`;
  file(KUBELET_BOOTSTRAP_KUBECONFIG, `apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster:\n    server: https://api-int.${installed}:6443\n`);
  file(`/etc/systemd/system/${LOCAL_DNS_UNIT}`, '[Unit]\n');
  if (withInstalledRecords) file(INSTALLED_NAMES_CONF, dnsmasqRecords('installed names', clusterRecords(installed, s.sim.options.nodeIPs[0]!, true)));
}

/**
 * One run of the factory node (its local DNS records in place) and a site DNS that knows none of the new names:
 * two tests below read it — what the node publishes locally, and what the site's DNS is asked (a whole run
 * each would cost a second scenario for the same input).
 */
let factory: Scenario | undefined;
let factoryRun: AgentRun | undefined;
before(async () => {
  factory = await startScenario();
  factoryNode(factory, true);
  factory.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(factory.sim) });
  factoryRun = await factory.run(['--once'], { timeoutMs: 15 * 60_000 });
});
after(async () => {
  await factory?.cleanup();
});

test('api-int resolves to the node through its local DNS: the network commits, the new names are published locally', () => {
  const [s, res] = [factory!, factoryRun!];
  assert.equal(res.code, 0, `exit 0\n${res.stdout.slice(-3000)}\n${res.stderr}`);
  const ip = s.sim.options.nodeIPs[0]!;
  assert.equal(readFileSync(path.join(s.node.root, SITE_NAMES_CONF), 'utf8').split('\n').filter((l) => l.startsWith('address=')).join('\n'), `address=/api.sno1.store42.example.com/${ip}\naddress=/apps.sno1.store42.example.com/${ip}`);
  assert.ok(s.node.calls('systemctl').some((c) => c.args.join(' ') === `try-restart ${LOCAL_DNS_UNIT} dnsmasq.service`));
  const report = JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/report.json'), 'utf8')) as { changes: { target: string; detail?: string }[] };
  const network = report.changes.find((c) => c.target === 'eno1');
  assert.match(network?.detail ?? '', /resolve api-int\.sno1\.factory\.example\.com: 192\.168\.111\.20/);
});

// A node of their own each: two at a time, since much of a run is the agent waiting.
describe('the node names on their own nodes', { concurrency: 2 }, () => {
  test('api-int does not resolve to the node (no local DNS, the site DNS does not know the factory domain): the run stops before kubelet, saying why', async () => {
    const s = await startScenario();
    try {
      factoryNode(s, false);
      s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { timeouts: { network: '20s', settleStability: '2s' } } }) });
      const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
      assert.notEqual(res.code, 0, res.stdout.slice(-3000));
      const errors = res.logs.filter((l) => l.level === 'error').map((l) => l.msg).join('\n');
      assert.match(errors, /the site network was committed at boot, but resolve api-int\.sno1\.factory\.example\.com: resolves to 192\.0\.2\.10, not to an address of this node; kubelet reaches the API by this name, so it would never register/);
      assert.deepEqual(s.node.nmstateHistory(), ['apply --no-commit', 'commit']);
      assert.equal(s.sim.kubeletStarted, false, 'kubelet was not started');
    } finally {
      await s.cleanup();
    }
  });

  test('4.14 (baseline): a site DNS with api-int but not the installed *.apps stops the run before kubelet, naming the canary host', async () => {
    const s = await startScenario();
    try {
      factoryNode(s, false);
      const installed = `${s.sim.options.clusterName}.${s.sim.options.baseDomain}`;
      // A site DNS (here the node's records, as the stand-in getent reads them) that publishes only api-int.
      mkdirSync(path.join(s.node.root, path.dirname(INSTALLED_NAMES_CONF)), { recursive: true });
      mkdirSync(path.join(s.node.root, 'etc/sno-reconfigure'), { recursive: true });
      writeFileSync(path.join(s.node.root, INSTALLED_NAMES_CONF), dnsmasqRecords('api-int only', [{ name: `api-int.${installed}`, address: s.sim.options.nodeIPs[0]! }]));
      writeFileSync(path.join(s.node.root, 'etc/sno-reconfigure/baseline.json'), JSON.stringify({ openshiftVersion: '4.14.12' }));
      s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { timeouts: { network: '20s', settleStability: '2s' } } }) });
      const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
      assert.notEqual(res.code, 0);
      const errors = res.logs.filter((l) => l.level === 'error').map((l) => l.msg).join('\n');
      assert.match(errors, /but canary-openshift-ingress-canary\.apps\.sno1\.factory\.example\.com resolves to 192\.0\.2\.10, not to an address of this node; from OpenShift 4\.14 the ingress operator probes its canary/);
      assert.equal(s.sim.kubeletStarted, false, 'kubelet was not started');
    } finally {
      await s.cleanup();
    }
  });

  test("the site's DNS is asked for the new names (through the node's dig): a warning when it lacks them, none when it has them", async () => {
    for (const published of [false, true]) {
      // Without the names: the factory node's run above. With them: a node of its own whose site DNS publishes them.
      const s = published ? await startScenario() : factory!;
      try {
        const ip = s.sim.options.nodeIPs[0]!;
        let res = factoryRun!;
        if (published) {
          factoryNode(s, true);
          writeFileSync(path.join(s.node.standinDir, 'site-dns'), `api.sno1.store42.example.com ${ip}\nconsole-openshift-console.apps.sno1.store42.example.com ${ip}\n`);
          s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
          res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
        }
        assert.equal(res.code, 0, res.stdout.slice(-2000));
        const digs = s.node.calls('dig').map((c) => c.args.join(' '));
        assert.ok(digs.some((d) => d.startsWith(`+short +time=2 +tries=1 @${ip.replace(/\.\d+$/, '.1')} api.sno1.store42.example.com`)), digs.join('\n'));
        const report = JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/report.json'), 'utf8')) as { warnings: string[] };
        const dnsWarnings = report.warnings.filter((w) => w.startsWith("the site's DNS does not resolve"));
        if (published) assert.deepEqual(dnsWarnings, []);
        else assert.match(dnsWarnings[0] ?? '', /^the site's DNS does not resolve api\.sno1\.store42\.example\.com \(not resolved \(.*no A record.*\)\): clients outside the node need api\.sno1\.store42\.example\.com and \*\.apps\.sno1\.store42\.example\.com there$/);
      } finally {
        if (published) await s.cleanup();
      }
    }
  });

  test("assisted-service's older node-local DNS (single-node.conf and forcedns, no dnsmasq_config.sh) is recognised: the new names go beside it", async () => {
    const s = await startScenario();
    try {
      const file = (p: string, text: string) => {
        mkdirSync(path.dirname(path.join(s.node.root, p)), { recursive: true });
        writeFileSync(path.join(s.node.root, p), text);
      };
      const installed = `${s.sim.options.clusterName}.${s.sim.options.baseDomain}`;
      const ip = s.sim.options.nodeIPs[0]!;
      // 50-master-dnsmasq-configuration before assisted-service 71f3cc229 (internal/network/manifests_generator.go).
      file(KUBELET_BOOTSTRAP_KUBECONFIG, `apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster:\n    server: https://api-int.${installed}:6443\n`);
      file('/etc/dnsmasq.d/single-node.conf', `address=/apps.${installed}/${ip}\naddress=/api-int.${installed}/${ip}\naddress=/api.${installed}/${ip}\n`);
      file('/etc/NetworkManager/dispatcher.d/forcedns', '#!/bin/bash\n');
      s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
      const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
      assert.equal(res.code, 0, `exit 0\n${res.stdout.slice(-3000)}\n${res.stderr}`);
      assert.equal(readFileSync(path.join(s.node.root, SITE_NAMES_CONF), 'utf8').split('\n').filter((l) => l.startsWith('address=')).join('\n'), `address=/api.sno1.store42.example.com/${ip}\naddress=/apps.sno1.store42.example.com/${ip}`);
      assert.ok(s.node.calls('systemctl').some((c) => c.args.join(' ') === `try-restart ${LOCAL_DNS_UNIT} dnsmasq.service`), 'its dnsmasq.service is restarted to read them');
    } finally {
      await s.cleanup();
    }
  });
});
