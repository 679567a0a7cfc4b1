// `npm run demo`: the real bundled agent (`dist/sno-reconfigure.cjs run`) against the built-in cluster
// simulator and a temp node root with stand-in host tools. The node boots and waits; a few seconds later
// the site-config "USB stick" is inserted; the agent restarts the node once so that the site network is applied at
// boot, then reconfigures kubelet, CSRs, domain, pull secret, mirrors and registry trust, waits for the cluster to
// settle, and disables itself.
//
//   SNO_DEMO_TIME_SCALE=1 npm run demo   # real rollout durations (kube-apiserver revision ~6 min)
//   default 0.02: every simulated minute takes 1.2 s
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { demoSiteConfigFiles, signedSiteConfigFiles, startScenario } from '../support/scenario';
import { BUNDLE_PATH } from '../support/bundle';
import { prettyLogLine } from './pretty';
import type { Report } from '../../src/engine/report';

const timeScale = Number(process.env.SNO_DEMO_TIME_SCALE ?? '0.02');
const color = process.stdout.isTTY === true;
const say = (text: string) => process.stdout.write(`${color ? '\x1b[1;36m' : ''}==> ${text}${color ? '\x1b[0m' : ''}\n`);

async function main(): Promise<number> {
  say(`starting the cluster simulator (time scale ${timeScale}: one simulated minute = ${(60 * timeScale).toFixed(1)} s)`);
  const s = await startScenario({ sim: { timeScale } });
  try {
    const sim = s.sim;
    say(`simulated SNO "${sim.options.clusterName}" on ${sim.options.baseDomain}, OpenShift ${sim.options.version}, node ${sim.options.nodeName}; kubelet is held down, as the factory left it`);
    // The site-config volume a technician brings: every change the agent can make. Its tag mirrors and registry CA
    // need signed media, so the factory installed a trusted key and the office signed the stick for this machine.
    const files = signedSiteConfigFiles(s.node.root, demoSiteConfigFiles(sim));
    say('the factory installed a trusted key: the stick is signed, pinned, and bound to this machine and its issue date');
    say(`the stick's site-config.yaml (beside it: ${Object.keys(files).filter((f) => f !== 'site-config.yaml').join(', ')}):`);
    process.stdout.write(files['site-config.yaml']!.replace(/^/gm, '    '));

    say('powering on the node: sno-reconfigure.service starts and waits for its site-config');
    const show = (line: string) => {
      const out = prettyLogLine(line, color);
      if (out) process.stdout.write(`    ${out}\n`);
    };
    const agent = () => {
      const child = s.spawnRun(['--log-level', 'info']);
      createInterface({ input: child.stdout! }).on('line', show);
      createInterface({ input: child.stderr! }).on('line', (line) => process.stderr.write(`    ${line}\n`));
      return new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
    };
    setTimeout(() => {
      say('the technician inserts the USB stick labelled SITE-CONFIG');
      s.node.attachVolume('sdb1', 'SITE-CONFIG', files);
    }, 4_000);
    let code = await agent();
    // The stick came after boot: the site network is applied at the next boot, before configure-ovs (docs/network.md).
    while (s.node.rebootRequested()) {
      say('the node restarts; at boot, sno-reconfigure-network.service applies the site network before configure-ovs builds br-ex');
      for (const line of s.node.powerCycle().split('\n')) show(line);
      say('sno-reconfigure.service starts again and carries on');
      code = await agent();
    }
    say(`the agent exited with status ${code}`);

    const status = spawnSync(process.execPath, [BUNDLE_PATH, 'status', '--root', s.node.root], { encoding: 'utf8' });
    say('sno-reconfigure status');
    process.stdout.write(status.stdout.replace(/^/gm, '    '));
    const bannerFile = path.join(s.node.root, 'etc/issue.d/50-sno-reconfigure.issue');
    say('console banner (/etc/issue.d/50-sno-reconfigure.issue)');
    process.stdout.write(readFileSync(bannerFile, 'utf8').replace(/^/gm, '    '));
    if (code === 0) printReport(JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/report.json'), 'utf8')) as Report, s.node.root);
    return code;
  } finally {
    await s.cleanup();
  }
}

function printReport(r: Report, root: string): void {
  say(`report (/var/lib/sno-reconfigure/report.json): ${r.result} in ${Math.round((r.durationMs ?? 0) / 1000)} s on OpenShift ${r.cluster.version ?? '(version unknown)'}`);
  const byKind = new Map<string, string[]>();
  for (const c of r.changes) byKind.set(c.kind, [...(byKind.get(c.kind) ?? []), `${c.action} ${c.target}${c.detail ? ` (${c.detail})` : ''}`]);
  for (const [kind, items] of byKind) {
    process.stdout.write(`    ${kind}:\n`);
    for (const i of items) process.stdout.write(`      - ${i}\n`);
  }
  if (r.cluster.apiUrl) process.stdout.write(`    new API:     ${r.cluster.apiUrl}\n    new console: ${r.cluster.consoleUrl}\n`);
  if (r.kubeconfig) process.stdout.write(`    kubeconfig for the new API name: ${r.kubeconfig} (on the node; here under ${root})\n`);
  if (r.warnings.length) process.stdout.write(`    warnings:\n${r.warnings.map((w) => `      - ${w}\n`).join('')}`);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`demo failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
