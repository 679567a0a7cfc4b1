// spec.network.verify must prove something about the site network (issue 36): a ping of the node's own loopback or
// of an address spec.network gives the node answers with the cable out, and hundreds of checks cannot answer
// within the verification window (401 pings ran 66 s against a 10 s window). `validate`, through the bundle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureBundle } from '../../support/bundle';

function validate(verify: string): { code: number; out: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sno-verify-'));
  try {
    writeFileSync(path.join(dir, 'site-config.yaml'), `apiVersion: sno-reconfigure.io/v1
kind: SiteConfig
metadata: {name: store-0042}
spec:
  baseDomain: store42.example.com
  network:
    nmstate:
      interfaces:
        - name: ens3
          type: ethernet
          state: up
          ipv4: {enabled: true, dhcp: false, address: [{ip: 192.168.42.10, prefix-length: 24}]}
      routes: {config: [{destination: 0.0.0.0/0, next-hop-address: 192.168.42.1, next-hop-interface: ens3}]}
    verify:
${verify}
`);
    const res = spawnSync(process.execPath, [ensureBundle(), 'validate', dir], { encoding: 'utf8' });
    return { code: res.status ?? 1, out: `${res.stdout}${res.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('verify checks that point at the node itself, or too many of them, are refused with the reason', () => {
  const good = validate('      ping: [192.168.42.1]');
  assert.equal(good.code, 0, good.out);
  const self = validate('      ping: [127.0.0.1, 192.168.42.10, 192.168.42.1]');
  assert.equal(self.code, 1, self.out);
  assert.match(self.out, /spec\.network\.verify\.ping\[0\]: '127\.0\.0\.1' is this node's own loopback address: it always answers, so it proves nothing about the site network/);
  assert.match(self.out, /spec\.network\.verify\.ping\[1\]: '192\.168\.42\.10' is an address spec\.network gives this node itself: it answers even with the cable out/);
  const local = validate('      ping: [0.0.0.0, 192.168.42.1]\n      resolve: [localhost, api.sno1.store42.example.com]');
  assert.equal(local.code, 1, local.out);
  assert.match(local.out, /spec\.network\.verify\.ping\[0\]: '0\.0\.0\.0' is the unspecified address, which Linux answers from this node itself/);
  assert.match(local.out, /spec\.network\.verify\.resolve\[0\]: 'localhost' is localhost, which this node resolves from its own \/etc\/hosts, even with the cable out/);
  const many = validate(`      ping: [${Array.from({ length: 401 }, (_, i) => `10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`).join(', ')}]`);
  assert.equal(many.code, 1, many.out.slice(0, 2000));
  assert.match(many.out, /spec\.network\.verify: lists 401 checks; at most 32 are allowed, because every one must answer within the verification window/);
});
