import { Testbed, leftovers } from './testbed/index';
import { factoryNode, siteConfigYaml } from './testbed/sno-node';
const bed = new Testbed();
const t0 = Date.now();
const log = (s: string) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${s}`);
try {
  const node = await factoryNode(bed);
  log('factory done');
  await node.boot();
  log('booted at site');
  const m = node.machine;
  await new Promise((r) => setTimeout(r, 3000));
  console.log(await node.statusText());
  console.log((await m.systemctl('status', '--no-pager', 'sno-reconfigure', 'kubelet')).stdout);
  await bed.insertMedia(m, { 'site-config.yaml': siteConfigYaml() });
  log('media inserted');
  try { await node.waitForSuccess(240_000); log('success'); } catch (e) { console.log((e as Error).message); }
  console.log(await node.statusText());
  console.log((await m.journalctl('-u', 'sno-reconfigure', '-o', 'cat')).stdout.slice(-8000));
  console.log((await m.journalctl('-u', 'kubelet', '-o', 'cat')).stdout.slice(-3000));
} catch (e) { console.log('ERR', e); }
finally { await bed.cleanup(); console.log(leftovers()); }
