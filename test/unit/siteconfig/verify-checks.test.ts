// spec.network.verify must prove something about the site network (issue 36, src/siteconfig/verify-checks.ts): a
// check the node answers by itself — its loopback, the unspecified address, an address spec.network gives it,
// localhost or its own host name — is refused naming the entry, as is a list longer than the window can answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkVerifyTargets, MAX_VERIFY_CHECKS } from '../../../src/siteconfig/verify-checks';
import { Findings } from '../../../src/siteconfig/problems';

const NMSTATE = { interfaces: [{ name: 'ens3', type: 'ethernet', state: 'up', ipv4: { enabled: true, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }] }, ipv6: { enabled: true, address: [{ ip: '2001:db8:42::10', 'prefix-length': 64 }] } }] };

function refused(verify: unknown, hostnames: string[] = ['sno1-node']): string[] {
  const f = new Findings();
  checkVerifyTargets(f, verify, NMSTATE, hostnames);
  return f.errors.map((e) => e.path);
}

test('pings the node answers by itself are refused, however the address is spelled', () => {
  const rows: Array<[string, string, boolean]> = [
    ['the gateway', '192.168.42.1', false],
    ['a site IPv6 router', '2001:db8:42::1', false],
    ['IPv4 loopback', '127.0.0.1', true],
    ['anywhere in 127/8', '127.8.9.10', true],
    ['IPv6 loopback, written out', '0:0:0:0:0:0:0:1', true],
    ['IPv4-mapped loopback', '::ffff:127.0.0.1', true],
    ['the unspecified IPv4 address', '0.0.0.0', true],
    ['the unspecified IPv6 address', '::', true],
    ['the node own site address', '192.168.42.10', true],
    ['the node own IPv6 site address, in another spelling', '2001:DB8:42:0::10', true],
  ];
  for (const [name, ip, refuse] of rows) assert.deepEqual(refused({ ping: [ip] }), refuse ? ['spec.network.verify.ping[0]'] : [], name);
});

test('names the node resolves by itself are refused: localhost and its own host name', () => {
  const rows: Array<[string, string, boolean]> = [
    ['the new API name', 'api.sno1.store42.example.com', false],
    ['localhost', 'localhost', true],
    ['localhost.localdomain, with a trailing dot', 'LOCALHOST.localdomain.', true],
    ['a subdomain of localhost', 'api.localhost', true],
    ['the node own host name (spec.hostname)', 'SNO1-node', true],
    ['a name that merely starts like it', 'sno1-node.store42.example.com', false],
  ];
  for (const [name, target, refuse] of rows) assert.deepEqual(refused({ resolve: [target] }), refuse ? ['spec.network.verify.resolve[0]'] : [], name);
  const f = new Findings();
  checkVerifyTargets(f, { resolve: ['localhost'] }, NMSTATE);
  assert.match(f.errors[0]!.message, /^'localhost' is localhost, which this node resolves from its own \/etc\/hosts, even with the cable out: it proves nothing about the site's DNS; resolve a name the site's DNS serves instead/);
});

test(`more than ${MAX_VERIFY_CHECKS} checks, pings and names together, are refused at spec.network.verify with the reason`, () => {
  const pings = Array.from({ length: 20 }, (_, i) => `10.1.0.${i + 1}`);
  const names = Array.from({ length: 12 }, (_, i) => `n${i}.example.com`);
  assert.deepEqual(refused({ ping: pings, resolve: names }), [], 'exactly the limit');
  const f = new Findings();
  checkVerifyTargets(f, { ping: pings, resolve: [...names, 'one-more.example.com'] }, NMSTATE);
  assert.deepEqual(f.errors, [{ path: 'spec.network.verify', message: `lists 33 checks; at most ${MAX_VERIFY_CHECKS} are allowed, because every one must answer within the verification window before the network is kept: list the gateway, a DNS server and a few names` }]);
});
