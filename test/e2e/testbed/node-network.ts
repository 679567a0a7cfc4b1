// The node's network, as on an OVN-Kubernetes RHCOS node (README "The node's network"): the NIC eno1 with its
// persistent profile (the installer's), NetworkManager (the testbed's model, stand-ins/nm-model.cjs) activating it at
// boot, real Open vSwitch (ovsdb-server + ovs-vswitchd, userspace datapath), ovs-configuration.service running the
// configure-ovs stand-in that builds br-ex on top at every boot, and two LANs (factory, store) the cable can be
// plugged into (stand-ins/testbed-lan). An OpenShiftSDN-style node has the same minus ovs-configuration: its
// address stays on the NIC.
import { accessSync, constants, readdirSync, readFileSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import type { IgnConfig, IgnUnit } from '../../support/ignition';
import type { Machine } from './machine';
import type { Testbed } from './index';
import { installNmstatectlOnRealNm } from './nmstatectl-standin';

const STAND_INS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'stand-ins');

export type LanName = 'factory' | 'store';
export interface Lan {
  name: LanName;
  nodeIp: string;
  prefix: number;
  gateway: string;
}
/** The LAN the node was installed on (its factory profile holds nodeIp). */
export const FACTORY_LAN: Lan = { name: 'factory', nodeIp: '192.168.111.20', prefix: 24, gateway: '192.168.111.1' };
/** The store's LAN: a static site address, dnsmasq's DHCP (STORE_DHCP) and IPv6 (STORE_LAN6). */
export const SITE_LAN: Lan = { name: 'store', nodeIp: '192.168.42.10', prefix: 24, gateway: '192.168.42.1' };
/** IPv6 on the store LAN (documentation prefix, inside the testbed's namespaces only). */
export const STORE_LAN6 = { nodeIp: '2001:db8:42::10', prefix: 64, gateway: '2001:db8:42::1' } as const;
/** The NIC's MAC (fixed, as hardware's) and the address the store's dnsmasq reserves for it. */
export const NIC_MAC = '52:54:00:6E:6F:01';
export const STORE_DHCP = { address: '192.168.42.50', prefix: 24, rangeStart: '192.168.42.100', rangeEnd: '192.168.42.150', domain: 'store42.example.com' } as const;
export const LAN_ENV = '/etc/testbed/lan.env';
export const PROFILE_DIR = '/etc/NetworkManager/system-connections';
export const RUN_PROFILE_DIR = '/run/NetworkManager/system-connections';
export const DISPATCHER_LOG = '/run/testbed-nm/dispatcher.log';

/** The NIC's persistent profile as the installer leaves it (networkConfig: static address on eno1). */
export function factoryProfile(lan: Lan = FACTORY_LAN): Record<string, unknown> {
  return {
    name: 'eno1',
    type: 'ethernet',
    state: 'up',
    ipv4: { enabled: true, dhcp: false, address: [{ ip: lan.nodeIp, 'prefix-length': lan.prefix }] },
    ipv6: { enabled: false },
    routes: [{ destination: '0.0.0.0/0', 'next-hop-address': lan.gateway, 'next-hop-interface': 'eno1' }],
    'dns-resolver': { server: [lan.gateway] },
  };
}

const LAN_SERVICE = `# Testbed: the node's two LANs and its NIC (test/e2e/testbed/stand-ins/testbed-lan).
[Unit]
Description=Testbed LANs (factory and store) and the NIC eno1
DefaultDependencies=no
# Before Open vSwitch: the NIC is up when ovs-vswitchd re-adds it from its saved database (real-node-network
# observation 16: once, OVS took a NIC still down and configure-ovs found no default route)
Before=network-pre.target NetworkManager.service kubelet.service sno-reconfigure.service ovsdb-server.service ovs-vswitchd.service
Wants=network-pre.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/libexec/testbed-lan

[Install]
WantedBy=multi-user.target
`;

const STORE_DNSMASQ_SERVICE = `# Testbed: the store's DHCP and DNS server, dnsmasq in the store LAN's namespace.
[Unit]
Description=Testbed store LAN DHCP/DNS server (dnsmasq)
Requires=testbed-lan.service
After=testbed-lan.service

[Service]
ExecStart=/usr/sbin/ip netns exec lan-store /usr/sbin/dnsmasq --keep-in-foreground --conf-file=/dev/null --user=root --group=root --interface=lan0 --bind-interfaces --no-resolv --no-hosts --dhcp-range=${STORE_DHCP.rangeStart},${STORE_DHCP.rangeEnd},255.255.255.0,12h --dhcp-host=${NIC_MAC.toLowerCase()},${STORE_DHCP.address} --dhcp-option=option:router,${SITE_LAN.gateway} --dhcp-option=option:dns-server,${SITE_LAN.gateway} --domain=${STORE_DHCP.domain} --host-record=registry.${STORE_DHCP.domain},192.168.42.20 --dhcp-leasefile=/run/testbed-store-dnsmasq.leases --pid-file=

[Install]
WantedBy=multi-user.target
`;

// Debian's own units go through ovs-ctl, which loads the openvswitch kernel module (this kernel has none): these run
// the two daemons directly; bridges use datapath_type=netdev (the userspace datapath). RHCOS's unit names.
const OVSDB_SERVICE = `# Testbed: Open vSwitch's database server (Debian's unit calls ovs-ctl, which needs the kernel module).
[Unit]
Description=Open vSwitch Database Unit (testbed)
DefaultDependencies=no
After=local-fs.target
Before=network-pre.target

[Service]
Type=forking
PIDFile=/run/openvswitch/ovsdb-server.pid
ExecStartPre=/bin/mkdir -p /run/openvswitch /var/log/openvswitch
ExecStartPre=/bin/sh -c '[ -s /etc/openvswitch/conf.db ] || ovsdb-tool create /etc/openvswitch/conf.db /usr/share/openvswitch/vswitch.ovsschema'
ExecStart=/usr/sbin/ovsdb-server /etc/openvswitch/conf.db --remote=punix:/run/openvswitch/db.sock --pidfile=/run/openvswitch/ovsdb-server.pid --detach --log-file=/var/log/openvswitch/ovsdb-server.log
ExecStartPost=/usr/bin/ovs-vsctl --no-wait init
`;
const VSWITCHD_SERVICE = `# Testbed: Open vSwitch's switch daemon, userspace datapath only.
[Unit]
Description=Open vSwitch Forwarding Unit (testbed)
DefaultDependencies=no
Requires=ovsdb-server.service
After=ovsdb-server.service
Before=network-pre.target

[Service]
Type=forking
PIDFile=/run/openvswitch/ovs-vswitchd.pid
ExecStart=/usr/sbin/ovs-vswitchd unix:/run/openvswitch/db.sock --pidfile=/run/openvswitch/ovs-vswitchd.pid --detach --log-file=/var/log/openvswitch/ovs-vswitchd.log
`;
const OPENVSWITCH_SERVICE = `# Testbed: RHCOS's openvswitch.service, which ovs-configuration.service requires.
[Unit]
Description=Open vSwitch (testbed)
Requires=ovsdb-server.service ovs-vswitchd.service
After=ovsdb-server.service ovs-vswitchd.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/true

[Install]
WantedBy=multi-user.target
`;

const NM_SERVICE = `# Testbed stand-in for NetworkManager.service: the model (stand-ins/nm-model.cjs) activates every persistent profile.
[Unit]
Description=Network Manager (testbed model)
Requires=testbed-lan.service
After=testbed-lan.service openvswitch.service
Wants=network.target
Before=network.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/bin/testbed-nm boot

[Install]
WantedBy=multi-user.target
`;
const NM_WAIT_ONLINE_SERVICE = `# Testbed stand-in for NetworkManager-wait-online.service: the model's boot activation is synchronous.
[Unit]
Description=Network Manager Wait Online (testbed)
Requires=NetworkManager.service
After=NetworkManager.service
Before=network-online.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/true

[Install]
WantedBy=network-online.target
`;

/**
 * ovs-configuration.service as machine-config-operator ships it (release-4.14,
 * templates/common/_base/units/ovs-configuration.service.yaml): the same ordering and type; without the
 * kdump.service and firstboot-osupdate.target orderings (neither exists here).
 */
const OVS_CONFIGURATION_SERVICE = `# Testbed: ovs-configuration.service (machine-config-operator release-4.14) running the configure-ovs stand-in.
[Unit]
Description=Configures OVS with proper host networking configuration
Requires=openvswitch.service
Wants=NetworkManager-wait-online.service
After=NetworkManager-wait-online.service openvswitch.service network.service nodeip-configuration.service
Before=kubelet-dependencies.target node-valid-hostname.service

[Service]
Type=oneshot
ExecStart=/usr/local/bin/configure-ovs.sh OVNKubernetes
StandardOutput=journal+console
StandardError=journal+console

[Install]
RequiredBy=kubelet-dependencies.target
`;
/** Wanted by multi-user.target here, so a node without the kubelet stand-in builds br-ex at boot all the same. */
const KUBELET_DEPENDENCIES_TARGET = `# Testbed: RHCOS's kubelet-dependencies.target (what kubelet.service waits for).
[Unit]
Description=Dependencies necessary to run kubelet
Requires=basic.target network-online.target
After=basic.target network-online.target

[Install]
WantedBy=multi-user.target
`;

const TESTBED_NM = '#!/bin/sh\n# The testbed NetworkManager model\'s command line (stand-ins/nm-model.cjs): boot, show, profile work for configure-ovs.\nexec /usr/bin/node /usr/local/lib/testbed-nm/nm-model.cjs "$@"\n';

/** The configure-ovs releases the real-NetworkManager node models (stand-ins/configure-ovs-nm.sh). */
export type OcpRelease = '4.14' | '4.15' | '4.16';
export const RELEASE_FILE = '/etc/testbed/release';
export const CONFIGURE_OVS_ENV = '/etc/testbed/configure-ovs.env';
export const NM_FACTORY_PROFILE = `${PROFILE_DIR}/eno1.nmconnection`;
/** The factory profile's UUID (the installer's keyfile has a fixed one, as a node's does once installed). */
export const FACTORY_PROFILE_UUID = '6b1b8d2e-3c1e-4a54-9d44-0e6e6f6f0001';

/**
 * The NIC's keyfile as the installer leaves it (static: the address with its gateway, DNS, IPv6 off; dhcp: method
 * auto), the shape of the one the real-node-network runs started from.
 */
export function factoryKeyfile(opts: { dhcp?: boolean; lan?: Lan } = {}): string {
  const lan = opts.lan ?? FACTORY_LAN;
  const ipv4 = opts.dhcp ? 'method=auto\n' : `method=manual\naddress1=${lan.nodeIp}/${lan.prefix},${lan.gateway}\ndns=${lan.gateway};\n`;
  return `[connection]\nid=eno1\nuuid=${FACTORY_PROFILE_UUID}\ntype=ethernet\ninterface-name=eno1\nautoconnect=true\n\n[ethernet]\n\n[ipv4]\n${ipv4}\n[ipv6]\nmethod=disabled\n\n[proxy]\n`;
}

/**
 * Testbed-only NetworkManager settings (RHCOS needs neither): keyfile profiles only, as on RHCOS (Debian adds its
 * ifupdown plugin); TAP devices unmanaged: Open vSwitch's userspace datapath gives br-ex's internal port a TAP device
 * also named br-ex, which NetworkManager 1.42 would otherwise take over as a second, external device.
 */
const NM_TESTBED_CONF = `# Testbed only (test/e2e/testbed/node-network.ts); RHCOS needs none of this.
[main]
plugins=keyfile

[keyfile]
unmanaged-devices=type:tun
`;

const NM_REAL_DROPIN = `# Testbed: NetworkManager runs once the node's LANs and NIC exist (testbed-lan).
[Unit]
Requires=testbed-lan.service
After=testbed-lan.service
`;

/**
 * ovs-configuration.service as machine-config-operator renders it for OVNKubernetes (branches release-4.14 and
 * release-4.16, templates/common/_base/units/ovs-configuration.service.yaml; 4.16 also orders after nmstate.service),
 * plus the testbed's knobs file. kdump.service, firstboot-osupdate.target and nmstate.service do not exist here.
 */
function ovsConfigurationUnit(release: OcpRelease): string {
  return `# Testbed: ovs-configuration.service (machine-config-operator release-${release}) running the configure-ovs stand-in on the real NetworkManager.
[Unit]
After=kdump.service
Description=Configures OVS with proper host networking configuration
Requires=openvswitch.service
Wants=NetworkManager-wait-online.service
After=firstboot-osupdate.target
After=NetworkManager-wait-online.service openvswitch.service network.service nodeip-configuration.service${release === '4.16' ? ' nmstate.service' : ''}
Before=kubelet-dependencies.target node-valid-hostname.service

[Service]
Type=oneshot
EnvironmentFile=-${CONFIGURE_OVS_ENV}
ExecStart=/usr/local/bin/configure-ovs.sh OVNKubernetes
StandardOutput=journal+console
StandardError=journal+console

[Install]
RequiredBy=kubelet-dependencies.target
`;
}

/**
 * nodeip-configuration.service as machine-config-operator renders it for platform None (branches release-4.14,
 * release-4.16, templates/common/_base/units/nodeip-configuration.service.yaml): before ovs-configuration and kubelet,
 * after NetworkManager-wait-online; \`node-ip set --retry-on-failure\` with the hint from
 * /etc/default/nodeip-configuration, looped until it succeeds, then a daemon-reload so kubelet sees its drop-in. The
 * real one runs baremetal-runtimecfg in podman; here the stand-in (stand-ins/nodeip-configuration.cjs) with node.
 */
const NODEIP_CONFIGURATION_SERVICE = `# Testbed: nodeip-configuration.service (machine-config-operator release-4.14..4.16) running the node-ip stand-in.
[Unit]
Description=Writes IP address configuration so that kubelet and crio services select a valid node IP
Wants=NetworkManager-wait-online.service
After=NetworkManager-wait-online.service firstboot-osupdate.target
Before=kubelet-dependencies.target ovs-configuration.service

[Service]
Type=oneshot
ExecStart=/bin/bash -c "until /usr/bin/node /usr/local/libexec/nodeip-configuration.cjs node-ip set --retry-on-failure --network-type OVNKubernetes \${NODEIP_HINT:-\${KUBELET_NODEIP_HINT:-}}; do sleep 5; done"
ExecStart=/bin/systemctl daemon-reload
ExecStartPre=/bin/mkdir -p /run/nodeip-configuration
StandardOutput=journal+console
StandardError=journal+console
EnvironmentFile=-/etc/default/nodeip-configuration

[Install]
RequiredBy=kubelet-dependencies.target
`;
export const NODEIP_DEFAULTS = '/etc/default/nodeip-configuration';
export const KUBELET_NODENET_DROPIN = '/etc/systemd/system/kubelet.service.d/20-nodenet.conf';
export const PRIMARY_IP_FILE = '/run/nodeip-configuration/primary-ip';
export const IFACE_DEFAULT_HINT = '/var/lib/ovnk/iface_default_hint';

export interface NodeNetworkOptions {
  /** ovn (default): br-ex built by ovs-configuration.service at every boot. sdn: no br-ex, the address on the NIC. */
  kind?: 'ovn' | 'sdn';
  /** The LAN the cable is plugged into at the first boot (default factory). */
  cable?: LanName;
  /** The NIC's persistent profile (default: factoryProfile()). */
  profile?: Record<string, unknown>;
  /**
   * model (default): the NetworkManager model (stand-ins/nm-model.cjs) with the configure-ovs stand-in on it.
   * real: Debian's NetworkManager with the testbed's OVS plugin build (the disk must come from
   * `bed.machine({realNetworkManager: true})`), configure-ovs (stand-ins/configure-ovs-nm.sh) and nodeip-configuration
   * (stand-ins/nodeip-configuration.cjs) driving it with nmcli. Options below apply to `real` only.
   */
  networkManager?: 'model' | 'real';
  /** configure-ovs's release (default 4.16). */
  release?: OcpRelease;
  /** The factory keyfile: static (default, the installer's 192.168.111.20/24) or DHCP. */
  factoryDhcp?: boolean;
  /** configure-ovs's RETRY (default its own 15m; '' turns retries off, e.g. '20s' for a test that waits one out). */
  retry?: string;
  /** Environment for configure-ovs beyond RETRY (CONFIGURE_OVS_RELOAD_SETTLE, CONFIGURE_OVS_ROUTE_WAIT). */
  configureOvsEnv?: Record<string, string>;
  /** KUBELET_NODEIP_HINT in /etc/default/nodeip-configuration (none by default). */
  nodeIpHint?: string;
  /** ovs-configuration.service enabled at boot (default true; false: held back, e.g. for the early network phase). */
  ovsConfigurationAtBoot?: boolean;
}

const dataUrl = (text: string | Buffer) => `data:;base64,${Buffer.from(text).toString('base64')}`;
const file = (p: string, text: string | Buffer, mode = 0o644) => ({ path: p, mode, overwrite: true, contents: { source: dataUrl(text) } });

/** The LANs, the store's dnsmasq and Open vSwitch: the same on both kinds of node. */
const lanAndSwitchUnits = (): IgnUnit[] => [
  { name: 'testbed-lan.service', enabled: true, contents: LAN_SERVICE },
  { name: 'testbed-store-dnsmasq.service', enabled: true, contents: STORE_DNSMASQ_SERVICE },
  { name: 'ovsdb-server.service', contents: OVSDB_SERVICE },
  { name: 'ovs-vswitchd.service', contents: VSWITCHD_SERVICE },
  { name: 'openvswitch.service', enabled: true, contents: OPENVSWITCH_SERVICE },
];

/** Files and units of the node's network, installed like the rest of the node (Ignition). */
export function nodeNetworkIgnition(opts: NodeNetworkOptions = {}): IgnConfig {
  if (opts.networkManager === 'real') return realNodeNetworkIgnition(opts);
  const profile = opts.profile ?? factoryProfile();
  const units: IgnUnit[] = [
    ...lanAndSwitchUnits(),
    { name: 'NetworkManager.service', enabled: true, contents: NM_SERVICE },
    { name: 'NetworkManager-wait-online.service', enabled: true, contents: NM_WAIT_ONLINE_SERVICE },
    { name: 'kubelet-dependencies.target', enabled: true, contents: KUBELET_DEPENDENCIES_TARGET },
  ];
  if (opts.kind !== 'sdn') units.push({ name: 'ovs-configuration.service', enabled: true, contents: OVS_CONFIGURATION_SERVICE });
  return {
    ignition: { version: '3.2.0' },
    storage: {
      files: [
        file('/usr/local/libexec/testbed-lan', readFileSync(path.join(STAND_INS, 'testbed-lan')), 0o755),
        file('/usr/local/bin/configure-ovs.sh', readFileSync(path.join(STAND_INS, 'configure-ovs.sh')), 0o755),
        file('/usr/local/bin/testbed-nm', TESTBED_NM, 0o755),
        file(LAN_ENV, `CABLE=${opts.cable ?? 'factory'}\n`),
        file(`${PROFILE_DIR}/${String(profile.name)}.${String(profile.type)}.nmstate.yaml`, `# the installer's profile (testbed)\n${stringify(profile)}`, 0o600),
      ],
    },
    systemd: { units },
  };
}

/**
 * Real programs in place of the stand-ins on the real-NetworkManager node (issue 38), from the environment of the test
 * process: SNO_TESTBED_CONFIGURE_OVS (a configure-ovs.sh, e.g. machine-config-operator's, with
 * SNO_TESTBED_CONFIGURE_OVS_RELEASE its release, default 4.16) and SNO_TESTBED_NMSTATECTL (an nmstatectl binary that
 * runs here). Each must be an executable file that runs (`bash -n` for the script, `--version` for nmstatectl): anything
 * else throws, naming the variable, when this module loads, before any test starts.
 */
export interface ToolOverrides {
  configureOvs?: { path: string; release: OcpRelease };
  nmstatectl?: string;
}

export function toolOverrides(env: NodeJS.ProcessEnv = process.env): ToolOverrides {
  const out: ToolOverrides = {};
  const check = (name: string, file: string, probe: string[]) => {
    try {
      if (!statSync(file).isFile()) throw new Error('not a regular file');
      accessSync(file, constants.X_OK);
    } catch (e) {
      throw new Error(`${name}=${file}: the testbed cannot install it (${(e as Error).message}); give the path of an executable file or unset ${name}`);
    }
    const res = spawnSync(probe[0]!, probe.slice(1), { encoding: 'utf8', timeout: 20_000 });
    if (res.status !== 0) throw new Error(`${name}=${file}: it does not run here (${probe.join(' ')}: ${(res.stderr || res.error?.message || `exit ${res.status}`).trim().slice(0, 300)}); give a file that runs on this machine or unset ${name}`);
  };
  const configureOvs = env.SNO_TESTBED_CONFIGURE_OVS;
  if (configureOvs) {
    check('SNO_TESTBED_CONFIGURE_OVS', configureOvs, ['bash', '-n', configureOvs]);
    const release = env.SNO_TESTBED_CONFIGURE_OVS_RELEASE ?? '4.16';
    if (!['4.14', '4.15', '4.16'].includes(release)) throw new Error(`SNO_TESTBED_CONFIGURE_OVS_RELEASE=${release}: expected 4.14, 4.15 or 4.16`);
    out.configureOvs = { path: configureOvs, release: release as OcpRelease };
  }
  const nmstatectl = env.SNO_TESTBED_NMSTATECTL;
  if (nmstatectl) {
    check('SNO_TESTBED_NMSTATECTL', nmstatectl, [nmstatectl, '--version']);
    out.nmstatectl = nmstatectl;
  }
  return out;
}
// a wrong override fails every test file that uses the testbed at once, before its first test
toolOverrides();

/**
 * Which configure-ovs and nmstatectl the real-NetworkManager node runs, for the network test files' suite titles: the
 * test report says whether the real programs or the stand-ins were checked (issue 38; README "Testing with real parts").
 */
export function networkProgramsInUse(env: NodeJS.ProcessEnv = process.env): string {
  const o = toolOverrides(env);
  const configureOvs = o.configureOvs ? `REAL configure-ovs ${o.configureOvs.path} (release ${o.configureOvs.release})` : 'configure-ovs stand-in';
  return `${configureOvs}, ${o.nmstatectl ? `REAL nmstatectl ${o.nmstatectl}` : 'nmstatectl stand-in'}`;
}

/**
 * The real-NetworkManager node's network (README "The node's network"): Debian's NetworkManager (with the testbed's OVS
 * plugin build) and its dbus, Open vSwitch, the configure-ovs and nodeip-configuration stand-ins on them, and the
 * testbed-only adaptations (each says why; RHCOS needs none).
 */
function realNodeNetworkIgnition(opts: NodeNetworkOptions): IgnConfig {
  const overrides = toolOverrides();
  const release = overrides.configureOvs?.release ?? opts.release ?? '4.16';
  const env = { ...(opts.retry !== undefined ? { RETRY: opts.retry } : {}), ...opts.configureOvsEnv };
  const units: IgnUnit[] = [
    ...lanAndSwitchUnits(),
    { name: 'NetworkManager.service', enabled: true, dropins: [{ name: '10-testbed-lan.conf', contents: NM_REAL_DROPIN }] },
    { name: 'NetworkManager-wait-online.service', enabled: true },
    { name: 'kubelet-dependencies.target', enabled: true, contents: KUBELET_DEPENDENCIES_TARGET },
    { name: 'nodeip-configuration.service', enabled: true, contents: NODEIP_CONFIGURATION_SERVICE },
    { name: 'ovs-configuration.service', enabled: opts.ovsConfigurationAtBoot !== false, contents: ovsConfigurationUnit(release) },
  ];
  const files = [
    file('/usr/local/libexec/testbed-lan', readFileSync(path.join(STAND_INS, 'testbed-lan')), 0o755),
    file('/usr/local/bin/configure-ovs.sh', readFileSync(overrides.configureOvs?.path ?? path.join(STAND_INS, 'configure-ovs-nm.sh')), 0o755),
    ...(overrides.nmstatectl ? [file('/usr/bin/nmstatectl', readFileSync(overrides.nmstatectl), 0o755)] : []),
    file('/usr/local/libexec/nodeip-configuration.cjs', readFileSync(path.join(STAND_INS, 'nodeip-configuration.cjs')), 0o755),
    // testbed-only adaptations (README "The node's network"): bridges on the userspace datapath, `rpm -qa` from dpkg
    file('/usr/local/bin/nmcli', readFileSync(path.join(STAND_INS, 'nmcli-netdev')), 0o755),
    file('/usr/local/bin/rpm', readFileSync(path.join(STAND_INS, 'rpm-dpkg')), 0o755),
    file('/etc/NetworkManager/conf.d/99-testbed.conf', NM_TESTBED_CONF),
    file(RELEASE_FILE, `${release}\n`),
    file(CONFIGURE_OVS_ENV, Object.entries(env).map(([k, v]) => `${k}=${v}\n`).join('')),
    file(LAN_ENV, `CABLE=${opts.cable ?? 'factory'}\n`),
    file(NM_FACTORY_PROFILE, factoryKeyfile({ dhcp: opts.factoryDhcp }), 0o600),
    ...(opts.nodeIpHint ? [file(NODEIP_DEFAULTS, `KUBELET_NODEIP_HINT=${opts.nodeIpHint}\n`)] : []),
  ];
  return { ignition: { version: '3.2.0' }, storage: { files }, systemd: { units } };
}

/** "Moving the cable": the NIC's peer goes to `lan` now (the node running) or at its next boot. */
export async function plugCable(m: Machine, lan: LanName): Promise<void> {
  if (m.running) await m.execOk(['/usr/local/libexec/testbed-lan', 'plug', lan]);
  else m.writeFile(LAN_ENV, `CABLE=${lan}\n`);
}

/**
 * Whether the node reaches `address` now. Echoes 0.5 s apart for up to 5 s, the first reply ends it (iputils ping:
 * with -w, -c 1 waits for one reply until the deadline): the first echo after an address moved can be lost to
 * neighbour discovery on a loaded machine, and a reachable address answers within the first second otherwise.
 * `once`: a single echo given 2 s to answer, for "not reachable yet" while something (the agent) may change the
 * network a moment later. `from`: the echoes leave from this source address (ping -I), whatever else the node holds.
 */
export async function reaches(m: Machine, address: string, opts: { once?: boolean; from?: string } = {}): Promise<boolean> {
  const echoes = opts.once ? ['-c', '1', '-W', '2'] : ['-c', '1', '-w', '5', '-i', '0.5'];
  return (await m.exec(['ping', ...echoes, ...(opts.from ? ['-I', opts.from] : []), address], { timeoutMs: 15_000 })).code === 0;
}

/** The persistent profiles on the node's disk, by file name (what survives a reboot). */
export function persistentProfiles(m: Machine): Record<string, string> {
  const out: Record<string, string> = {};
  let names: string[] = [];
  try {
    names = readdirSync(m.path(PROFILE_DIR)).sort();
  } catch {
    return out;
  }
  for (const f of names) out[f] = readFileSync(path.join(m.path(PROFILE_DIR), f), 'utf8');
  return out;
}

/**
 * A node with the real NetworkManager (its disk overlaid with the testbed's OVS plugin build, built on first use) and
 * the network of `realNodeNetworkIgnition`; not booted. Boot it with `{network: 'private'}`.
 */
export async function realNetworkNode(bed: Testbed, opts: Omit<NodeNetworkOptions, 'networkManager' | 'kind'> & { hostname?: string } = {}): Promise<Machine> {
  const m = await bed.machine({ hostname: opts.hostname ?? 'sno-node', realNetworkManager: true, nmstatectl: false });
  // nmstatectl: the stand-in that applies nmstate's rules through this NetworkManager (README "The nmstatectl stand-in")
  installNmstatectlOnRealNm(m.root);
  await bed.installIgnition(m, nodeNetworkIgnition({ ...opts, networkManager: 'real' }));
  return m;
}
