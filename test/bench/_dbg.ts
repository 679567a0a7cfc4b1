import { startScenario, siteConfigFor } from '/work/main/test/support/scenario';
const s = await startScenario();
try {
  s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
  const t0 = Date.now();
  const res = await s.run(['--once'], { timeoutMs: 180_000 });
  console.log('code', res.code, Date.now() - t0);
  for (const l of res.logs) console.log(JSON.stringify(l).slice(0,300), l.level, l.step ?? '', l.msg);
  console.log(res.stderr.slice(-2000));
} finally { await s.cleanup(); }
