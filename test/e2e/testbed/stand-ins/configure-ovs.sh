#!/bin/bash
# Testbed stand-in for /usr/local/bin/configure-ovs.sh, run by ovs-configuration.service. Written from what the real
# script does (machine-config-operator, branch release-4.14, templates/common/_base/files/configure-ovs-network.yaml),
# not copied from it; the profile work goes through the testbed's NetworkManager model (testbed-nm, in place of
# nmcli). What it does, as the real one:
# - OVNKubernetes: on the first run of a boot (no /run/configure-ovs-boot-done) it rolls back what it built at the
#   previous boot ("on every boot we rollback and generate the configuration again", rollback_nm), then marks the
#   boot done; it finds the interface of the default route (IPv4, then IPv6; the real script tries 12 times 5 s
#   apart, this one 12 times 1 s apart); if that is br-ex, "Networking already configured" and nothing changes;
#   otherwise, when br-ex is not active, it rolls back again, then builds br-ex (convert_to_bridge): runtime
#   profiles for the bridge (netdev datapath here: no kernel module), the uplink as its port, and the internal
#   interface br-ex with the uplink's IP settings (static or DHCP), routes, DNS, MAC, and route metric 48
#   (BRIDGE_METRIC), activated in that order; the uplink's name goes to /var/lib/ovnk/iface_default_hint.
# - OpenShiftSDN: rolls back what configure-ovs built (no br-ex on such a node).
# Not modelled: the extra bridge br-ex1 (/etc/ovnk/extra_bridge), the node IP hint
# (/run/nodeip-configuration/primary-ip), bonds and VLANs as uplinks (the testbed kernel has neither), the 15-minute
# retry loop (a failure fails the unit).
set -euo pipefail

NM="/usr/local/bin/testbed-nm"
BRIDGE=br-ex
BRIDGE_METRIC=48
HINT_FILE=/var/lib/ovnk/iface_default_hint
BOOT_DONE=/run/configure-ovs-boot-done

print_state() {
  echo "Current device, address and routing state:"
  ip -br addr || true
  ip route show default || true
  ovs-vsctl --timeout=10 show 2>/dev/null | sed -n '1,20p' || true
}

default_route_interface() {
  local iface="" n=0
  while [ "$n" -lt 12 ]; do
    iface=$(ip route show default | awk '{ if ($4 == "dev") { print $5; exit } }')
    [ -n "$iface" ] || iface=$(ip -6 route show default | awk '{ if ($4 == "dev") { print $5; exit } }')
    [ -n "$iface" ] && break
    n=$((n + 1))
    sleep 1
  done
  echo "$iface"
}

case "${1:-}" in
  OVNKubernetes) ;;
  OpenShiftSDN)
    "$NM" rollback-runtime
    exit 0
    ;;
  *)
    echo "usage: configure-ovs.sh OVNKubernetes|OpenShiftSDN" >&2
    exit 1
    ;;
esac

print_state
rolled_back=""
if [ ! -f "$BOOT_DONE" ]; then
  echo "Running on boot, restoring previous configuration before proceeding..."
  "$NM" rollback-runtime
  rolled_back=yes
  print_state
fi
touch "$BOOT_DONE"

iface=$(default_route_interface)
if [ "$iface" = "$BRIDGE" ]; then
  echo "Networking already configured and up for ${BRIDGE}!"
  exit 0
fi
if [ -z "$iface" ]; then
  echo "ERROR: Unable to find default gateway interface"
  exit 1
fi
mkdir -p "$(dirname "$HINT_FILE")"
echo "$iface" > "$HINT_FILE"
# Just rolled back on this boot: br-ex's profiles were runtime ones and its bridge is gone, so it cannot be active
# and the real script's second rollback here changes nothing (two model runs saved per boot).
if [ -z "$rolled_back" ] && ! "$NM" active-profile "$BRIDGE" > /dev/null; then
  echo "Bridge ${BRIDGE} is not active, restoring previous configuration before proceeding..."
  "$NM" rollback-runtime
fi
echo "Converting ${iface} into a port of ${BRIDGE}, with its IP settings on the ${BRIDGE} internal interface"
"$NM" build-bridge "$BRIDGE" "$iface" "$BRIDGE_METRIC"
print_state
