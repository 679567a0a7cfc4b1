// The node's network as `nmstatectl show` reports it, read into a small typed model: which interfaces exist,
// which are ports of which controller, and — on an OVN-Kubernetes node — the OVS bridge br-ex and its uplink.
// nmstate's shape (nmstate/nmstate, branch base): an interface's `controller` names its controller
// (rust/src/lib/ifaces/base.rs BaseInterface.controller); an OVS bridge lists its ports under `bridge.port[].name`,
// a bond under `link-aggregation.port` (`slaves` before nmstate 2), a VLAN its parent under `vlan.base-iface`.
// The uplink is the br-ex port that is neither br-ex itself nor an OVS patch port to br-int, as lifecycle-agent's
// detectBrExNetworkInterface picks it (openshift-kni/lifecycle-agent lca-cli/ipconfig/prepivot.go, 0e1bf18).
import { parseYamlCore } from '../util/yaml';
import { portsOf } from '../siteconfig/nmstate';

export const BR_EX = 'br-ex';

export interface IpSettings {
  enabled: boolean;
  dhcp: boolean;
  autoconf: boolean;
  /** `ip/prefix` */
  addresses: string[];
}

export interface NetInterface {
  name: string;
  type: string;
  state: string;
  controller?: string;
  ports: string[];
  ipv4?: IpSettings;
  ipv6?: IpSettings;
  /** The interface as nmstate gave it, for fields this model does not name (vlan, link-aggregation). */
  raw: Record<string, unknown>;
}

export interface Topology {
  interfaces: NetInterface[];
  /** Set when the node has the OVS bridge br-ex (OVN-Kubernetes). */
  brEx?: { ports: string[]; uplink?: string; internal?: NetInterface };
  routes: Record<string, unknown>[];
  dns?: Record<string, unknown>;
}

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const truthy = (v: unknown) => v === true || v === 'true';

function ipSettings(v: unknown): IpSettings | undefined {
  if (v === undefined || v === null) return undefined;
  const ip = obj(v);
  const addresses = list(ip.address)
    .map(obj)
    .filter((a) => typeof a.ip === 'string')
    .map((a) => `${String(a.ip)}/${String(a['prefix-length'] ?? '')}`);
  return { enabled: truthy(ip.enabled) || (ip.enabled === undefined && addresses.length > 0), dhcp: truthy(ip.dhcp), autoconf: truthy(ip.autoconf), addresses };
}

export function readInterface(v: unknown): NetInterface | undefined {
  const raw = obj(v);
  if (typeof raw.name !== 'string' || raw.name === '') return undefined;
  const controller = typeof raw.controller === 'string' && raw.controller !== '' ? raw.controller : undefined;
  const ipv4 = ipSettings(raw.ipv4);
  const ipv6 = ipSettings(raw.ipv6);
  return {
    name: raw.name,
    type: typeof raw.type === 'string' ? raw.type : 'unknown',
    state: typeof raw.state === 'string' ? raw.state : 'up',
    ...(controller ? { controller } : {}),
    ports: portsOf(raw),
    ...(ipv4 ? { ipv4 } : {}),
    ...(ipv6 ? { ipv6 } : {}),
    raw,
  };
}

const isPatchPort = (topo: NetInterface[], name: string) =>
  name.startsWith('patch-') || topo.some((i) => i.name === name && i.type === 'ovs-interface' && i.raw.patch !== undefined);

/** Reads `nmstatectl show` (YAML, or JSON with --json). Throws when the text is not a state at all. */
export function parseTopology(text: string): Topology {
  const doc = obj(parseYamlCore(text));
  if (!Array.isArray(doc.interfaces)) throw new Error('nmstatectl show printed no interface list');
  const interfaces = doc.interfaces.map(readInterface).filter((i): i is NetInterface => i !== undefined);
  const bridge = interfaces.find((i) => i.name === BR_EX && i.type === 'ovs-bridge');
  const routes = list(obj(doc.routes).config).map(obj);
  const dns = obj(obj(doc['dns-resolver']).config);
  const topo: Topology = { interfaces, routes, ...(Object.keys(dns).length ? { dns } : {}) };
  if (bridge) {
    const uplink = bridge.ports.find((p) => p !== BR_EX && !isPatchPort(interfaces, p));
    const internal = interfaces.find((i) => i.name === BR_EX && i.type === 'ovs-interface');
    topo.brEx = { ports: bridge.ports, ...(uplink ? { uplink } : {}), ...(internal ? { internal } : {}) };
  }
  return topo;
}

export function findInterface(topo: Topology, name: string): NetInterface | undefined {
  return topo.interfaces.find((i) => i.name === name && !(name === BR_EX && i.type === 'ovs-bridge'));
}
