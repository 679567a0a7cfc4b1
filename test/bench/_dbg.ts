import { startScenario, siteConfigFor } from '/work/main/test/support/scenario';
const s = await startScenario();
try {
  s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
  const t0 = Date.now();
  s.sim.events.on('log', (l: string) => console.log(Date.now() - t0, 'SIM', l));
  const res = await s.run(['--once'], { timeoutMs: 180_000 });
  console.log('code', res.code, Date.now() - t0);
  for (const l of res.logs) console.log(Date.parse(String(l.time)) - t0, l.level, l.step ?? '', l.msg);
  for (const c of s.node.calls()) console.log(c.time - t0, 'CALL', c.tool, c.args.join(' '));
} finally { await s.cleanup(); }
