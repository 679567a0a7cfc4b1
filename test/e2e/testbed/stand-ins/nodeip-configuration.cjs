#!/usr/bin/env node
// Testbed stand-in for `runtimecfg node-ip set`, what nodeip-configuration.service runs (in a baremetal-runtimecfg
// container on RHCOS; here with the host's node). Written from openshift/baremetal-runtimecfg, branch release-4.16
// (the same rules on release-4.14): cmd/runtimecfg/node-ip.go (set, getSuitableIPs) and pkg/utils/addresses.go
// (AddressesRouting, AddressesDefault, ValidNodeAddress), not copied from it. What it does, as the real one:
// - /run/nodeip-configuration/primary-ip already there: "no need for new configuration", nothing changes (it is a
//   tmpfs file: the choice is made once per boot, by the first run);
// - with hint addresses (the unit passes ${NODEIP_HINT:-${KUBELET_NODEIP_HINT:-}} from
//   /etc/default/nodeip-configuration): among the addresses present *now*, the first (links in index order) whose
//   subnet contains a hint, plus one address of the other family from the same link;
// - else (or when nothing matches): the addresses of links with a default route, ordered by the route's metric, link
//   index, family (IPv4 first unless --prefer-ipv6), gateway on the address's subnet, public before private; the first
//   IPv4 and the first IPv6 of that order;
// - addresses left out: link-local, IPv6 no longer preferred, labels with "eip", and for OVNKubernetes fd69::2;
// - writes /etc/systemd/system/kubelet.service.d/20-nodenet.conf (KUBELET_NODE_IP, KUBELET_NODE_IPS),
//   /etc/systemd/system/crio.service.d/20-nodenet.conf (CONTAINER_STREAM_ADDRESS), /run/nodeip-configuration/primary-ip
//   and …/ipv4, …/ipv6;
// - --retry-on-failure: nothing found, it waits 2, 4, 8 … up to 300 s and looks again (the unit also loops on failure).
// Not modelled: the bind test of a chosen IPv6 address, /128 IPv6 addresses matched through router-advertised routes,
// the remote-worker label (only with VIPs on baremetal).
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const KUBELET_DROPIN = '/etc/systemd/system/kubelet.service.d/20-nodenet.conf';
const CRIO_DROPIN = '/etc/systemd/system/crio.service.d/20-nodenet.conf';
const PRIMARY_IP = '/run/nodeip-configuration/primary-ip';
const IPV4_FILE = '/run/nodeip-configuration/ipv4';
const IPV6_FILE = '/run/nodeip-configuration/ipv6';

const log = (msg) => process.stderr.write(`node-ip: ${msg}\n`);
const ipJson = (...args) => JSON.parse(execFileSync('ip', ['-j', ...args], { encoding: 'utf8' }) || '[]');

function parseArgs(argv) {
  const o = { retry: false, preferIPv6: false, networkType: 'OVNKubernetes', hints: [] };
  if (argv[0] === 'node-ip') argv = argv.slice(1);
  if (argv[0] !== 'set') throw new Error('usage: node-ip set [--retry-on-failure] [--prefer-ipv6] [--network-type T] [HINT...]');
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--retry-on-failure' || a === '-r') o.retry = true;
    else if (a === '--prefer-ipv6' || a === '-6') o.preferIPv6 = true;
    else if (a === '--network-type' || a === '-n') o.networkType = argv[++i];
    else if (a.startsWith('--network-type=')) o.networkType = a.slice('--network-type='.length);
    else if (a.trim() !== '') {
      if (!isIp(a)) throw new Error(`Failed to parse IP address ${a}`);
      o.hints.push(a);
    }
  }
  return o;
}

function isIp(s) {
  return require('node:net').isIP(s) !== 0;
}

/** IPv4 as 32 bits, IPv6 as 128, for subnet tests. */
function toBig(ip) {
  if (ip.includes(':')) {
    const [head, tail = ''] = ip.split('::');
    const h = head ? head.split(':') : [];
    const t = tail ? tail.split(':') : [];
    const parts = ip.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
    return parts.reduce((acc, p) => (acc << 16n) + BigInt(parseInt(p || '0', 16)), 0n);
  }
  return ip.split('.').reduce((acc, p) => (acc << 8n) + BigInt(Number(p)), 0n);
}

function contains(addr, prefix, ip) {
  const v6 = addr.includes(':');
  if (v6 !== ip.includes(':')) return false;
  const bits = v6 ? 128 : 32;
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(bits - prefix);
  return (toBig(addr) & mask) === (toBig(ip) & mask);
}

function isPrivate(ip) {
  if (ip.includes(':')) return (toBig(ip) >> 121n) === 0x7en; // fc00::/7
  return contains('10.0.0.0', 8, ip) || contains('172.16.0.0', 12, ip) || contains('192.168.0.0', 16, ip);
}

/** The node's addresses per link (index order, as netlink lists them), filtered as ValidNodeAddress/ValidOVNNodeAddress. */
function addresses(ovn) {
  return ipJson('addr', 'show')
    .sort((a, b) => a.ifindex - b.ifindex)
    .map((link) => ({
      ifindex: link.ifindex,
      ifname: link.ifname,
      addrs: (link.addr_info || [])
        .filter((a) => a.family === 'inet' || a.family === 'inet6')
        .filter((a) => a.scope !== 'link' && !/^fe80:/i.test(a.local))
        .filter((a) => !(a.family === 'inet6' && a.preferred_life_time === 0))
        .filter((a) => !(a.label || '').includes('eip'))
        .filter((a) => !(ovn && a.local === 'fd69::2'))
        .map((a) => ({ ip: a.local, prefix: a.prefixlen, v6: a.family === 'inet6' })),
    }));
}

function addressesRouting(hints, preferIPv6) {
  let matches = [];
  for (const link of addresses(false)) {
    for (const a of link.addrs) {
      if (hints.includes(a.ip)) continue;
      if (hints.some((h) => contains(a.ip, a.prefix, h))) {
        matches.push(a);
        break;
      }
    }
    if (matches.length) {
      const other = link.addrs.find((a) => a.v6 !== matches[0].v6);
      if (other) matches.push(other);
      break;
    }
  }
  matches = stableSort(matches, (a) => (a.v6 === preferIPv6 ? 0 : 1));
  return matches.map((a) => a.ip);
}

function addressesDefault(preferIPv6, ovn) {
  const defaults = new Map();
  for (const family of ['-4', '-6']) {
    for (const r of ipJson(family, 'route', 'show', 'default')) {
      const idx = ifindexOf(r.dev);
      if (idx !== undefined && !defaults.has(idx)) defaults.set(idx, r);
    }
  }
  const found = [];
  for (const link of addresses(ovn)) {
    const route = defaults.get(link.ifindex);
    if (!route) continue;
    for (const a of link.addrs) found.push({ ...a, ifindex: link.ifindex, metric: route.metric || 0, gwOnSubnet: route.gateway ? contains(a.ip, a.prefix, route.gateway) : false });
  }
  found.sort((a, b) => {
    if (a.metric !== b.metric) return a.metric - b.metric;
    if (a.ifindex !== b.ifindex) return a.ifindex - b.ifindex;
    if (a.v6 !== b.v6) return a.v6 === preferIPv6 ? -1 : 1;
    if (a.gwOnSubnet !== b.gwOnSubnet) return a.gwOnSubnet ? -1 : 1;
    return (isPrivate(a.ip) ? 1 : 0) - (isPrivate(b.ip) ? 1 : 0);
  });
  const out = [];
  let v4 = false;
  let v6 = false;
  for (const a of found) {
    if ((a.v6 && v6) || (!a.v6 && v4)) continue;
    out.push(a.ip);
    if (a.v6) v6 = true;
    else v4 = true;
  }
  return out;
}

let linkIndexes;
function ifindexOf(dev) {
  linkIndexes ??= new Map(ipJson('link', 'show').map((l) => [l.ifname, l.ifindex]));
  return linkIndexes.get(dev);
}

function stableSort(list, key) {
  return list.map((v, i) => ({ v, i })).sort((a, b) => key(a.v) - key(b.v) || a.i - b.i).map((x) => x.v);
}

function writeFile(file, data) {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
  log(`Writing path ${file} with content ${data}`);
  fs.writeFileSync(file, data);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  try {
    const ip = fs.readFileSync(PRIMARY_IP, 'utf8').trim();
    if (isIp(ip)) {
      log(`Found ip ${ip} in ${PRIMARY_IP}, no need for new configuration, exiting`);
      return;
    }
  } catch {
    // not chosen yet in this boot
  }
  let wait = 1;
  let chosen = [];
  for (;;) {
    wait *= 2;
    linkIndexes = undefined;
    if (o.hints.length) chosen = addressesRouting(o.hints, o.preferIPv6);
    if (!chosen.length) chosen = addressesDefault(o.preferIPv6, o.networkType === 'OVNKubernetes');
    if (chosen.length) break;
    if (!o.retry) throw new Error('Failed to find node IP');
    log('Failed to find a suitable node IP');
    await new Promise((r) => setTimeout(r, Math.min(wait, 300) * 1000));
  }
  log(`Chosen Node IPs: [${chosen.join(' ')}]`);
  const nodeIP = chosen[0];
  const nodeIPs = chosen.slice(0, 2).join(',');
  writeFile(KUBELET_DROPIN, `[Service]\nEnvironment="KUBELET_NODE_IP=${nodeIP}" "KUBELET_NODE_IPS=${nodeIPs}"\n`);
  writeFile(CRIO_DROPIN, `[Service]\nEnvironment="CONTAINER_STREAM_ADDRESS=${nodeIP}"\n`);
  writeFile(PRIMARY_IP, nodeIP);
  let v4 = false;
  let v6 = false;
  for (const ip of chosen.slice(0, 2)) {
    if (ip.includes(':') && !v6) {
      writeFile(IPV6_FILE, ip);
      v6 = true;
    } else if (!ip.includes(':') && !v4) {
      writeFile(IPV4_FILE, ip);
      v4 = true;
    }
  }
}

main().catch((e) => {
  log(`error in node-ip set: ${e.message}`);
  process.exit(1);
});
