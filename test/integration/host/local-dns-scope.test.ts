// The node-local DNS answers the node and its pods, not the store LAN (issue 29 item 7): the dnsmasq command line
// of the rendered unit (src/render/local-dns.ts), run by a real dnsmasq (Debian dnsmasq-base 2.90) in a network
// namespace standing for the node, with br-ex carrying the node's LAN address and the stable internal IP, and a
// second namespace standing for another host on the store LAN. Queries are made with dig, one try each.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { DNSMASQ_DIR, LOCAL_DNS_ENV, clusterRecords, dnsmasqRecords, renderLocalDnsUnit } from '../../../src/render/local-dns';
import { ensureDebianPackages } from '../../support/apt';

const NODE_NS = `sno-dns-node-${process.pid}`;
const LAN_NS = `sno-dns-lan-${process.pid}`;
const NODE_LAN_IP = '192.168.77.10';
const LAN_HOST_IP = '192.168.77.20';
const INTERNAL_IP = '172.31.254.10';
const DOMAIN = 'sno1.factory.example.com';
const dir = mkdtempSync(path.join(tmpdir(), 'sno-dns-scope-'));
let dnsmasq: ChildProcess | undefined;

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });

/** The unit's ExecStart as systemd runs it: Environment=, then the env file `prepare` writes, then ${VAR} expanded. */
function dnsmasqArgv(unit: string, envFile: string, confDir: string): string[] {
  const env: Record<string, string> = {};
  for (const m of unit.matchAll(/^Environment=(\w+)=(.*)$/gm)) env[m[1]!] = m[2]!;
  for (const m of envFile.matchAll(/^(\w+)=(.*)$/gm)) env[m[1]!] = m[2]!;
  const exec = /^ExecStart=(.*)$/m.exec(unit)?.[1] ?? '';
  return exec
    .split(/\s+/)
    .map((word) => word.replace(/\$\{(\w+)\}/g, (_, name: string) => env[name] ?? ''))
    .map((word) => (word.startsWith(`--conf-dir=${DNSMASQ_DIR},`) ? `--conf-dir=${confDir}` : word))
    .concat('--pid-file=', '--log-facility=-');
}

/** dig's answer, or undefined when nothing answered (dig exits 9: no reply). */
function query(ns: string, server: string, name: string): string | undefined {
  const res = spawnSync('ip', ['netns', 'exec', ns, 'dig', '+short', '+time=2', '+tries=1', `@${server}`, name], { encoding: 'utf8' });
  return res.status === 0 ? res.stdout.trim() : undefined;
}

before(async () => {
  ensureDebianPackages(['dnsmasq-base', 'bind9-dnsutils', 'iproute2']);
  ip('netns', 'add', NODE_NS);
  ip('netns', 'add', LAN_NS);
  ip('link', 'add', 'br-ex', 'netns', NODE_NS, 'type', 'veth', 'peer', 'name', 'lan0', 'netns', LAN_NS);
  ip('-n', NODE_NS, 'addr', 'add', `${NODE_LAN_IP}/24`, 'dev', 'br-ex');
  ip('-n', NODE_NS, 'addr', 'add', `${INTERNAL_IP}/32`, 'dev', 'br-ex');
  ip('-n', LAN_NS, 'addr', 'add', `${LAN_HOST_IP}/24`, 'dev', 'lan0');
  for (const [ns, dev] of [[NODE_NS, 'br-ex'], [NODE_NS, 'lo'], [LAN_NS, 'lan0'], [LAN_NS, 'lo']] as const) ip('-n', ns, 'link', 'set', dev, 'up');
  const confDir = path.join(dir, 'dnsmasq.d');
  mkdirSync(confDir);
  // What `prepare` writes (src/factory/local-dns.ts): the installed names to the internal IP, and LOCAL_DNS_IP.
  writeFileSync(path.join(confDir, 'sno-reconfigure-installed.conf'), dnsmasqRecords('installed names', clusterRecords(DOMAIN, INTERNAL_IP, true)));
  const argv = dnsmasqArgv(renderLocalDnsUnit(), `LOCAL_DNS_IP=${INTERNAL_IP}\n`, confDir);
  dnsmasq = spawn('ip', ['netns', 'exec', NODE_NS, ...argv], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  dnsmasq.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  // Ready once it answers on loopback (a deadline sized for a loaded machine, not a timed assertion).
  const deadline = Date.now() + 60_000;
  while (query(NODE_NS, '127.0.0.1', `api-int.${DOMAIN}`) === undefined) {
    if (Date.now() > deadline || dnsmasq.exitCode !== null) throw new Error(`dnsmasq did not answer on 127.0.0.1: ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
});

after(() => {
  dnsmasq?.kill('SIGTERM');
  for (const ns of [NODE_NS, LAN_NS]) spawnSync('ip', ['netns', 'del', ns]);
  rmSync(dir, { recursive: true, force: true });
});

test('the node gets answers on loopback and on the internal IP (where resolv.conf and CoreDNS send it)', () => {
  assert.ok(renderLocalDnsUnit().includes(`EnvironmentFile=-${LOCAL_DNS_ENV}`), 'the unit reads LOCAL_DNS_IP from the env file prepare writes');
  assert.equal(query(NODE_NS, '127.0.0.1', `api-int.${DOMAIN}`), INTERNAL_IP);
  assert.equal(query(NODE_NS, INTERNAL_IP, `canary-openshift-ingress-canary.apps.${DOMAIN}`), INTERNAL_IP);
});

test('a host on the store LAN gets no answer at the node\'s LAN address, nor does the node itself there', () => {
  assert.equal(query(LAN_NS, NODE_LAN_IP, `api-int.${DOMAIN}`), undefined, 'the store LAN must not reach the cluster\'s names');
  assert.equal(query(LAN_NS, NODE_LAN_IP, 'example.com'), undefined, 'nor use the node as a recursive resolver');
  assert.equal(query(NODE_NS, NODE_LAN_IP, `api.${DOMAIN}`), undefined);
});
