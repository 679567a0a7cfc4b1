#!/bin/bash
# Testbed stand-in for /usr/local/bin/configure-ovs.sh on the real-NetworkManager node: it drives the real
# NetworkManager with nmcli, as the real script does. Written from what machine-config-operator's script does per
# release (templates/common/_base/files/configure-ovs-network.yaml on branches release-4.14, release-4.15,
# release-4.16: "MCO <branch>" below), not copied from it; each rule names the branch it comes from.
# The release is /etc/testbed/release (4.14, 4.15 or 4.16; default 4.16). Testbed knobs, in the environment
# (ovs-configuration.service reads /etc/testbed/configure-ovs.env): RETRY as in the real script (default 15m, "" = no
# retry), CONFIGURE_OVS_RELOAD_SETTLE (the real script's 10 s wait after `nmcli connection reload`),
# CONFIGURE_OVS_ROUTE_WAIT (seconds between its 12 looks for a default route, real: 5).
# Not modelled: the extra bridge br-ex1 (/etc/ovnk/extra_bridge), VLAN, bond, team, tun and bridge uplinks (the testbed
# kernel has no 8021q/bonding modules: such an uplink fails with a message saying so), the vmxnet3 multicast option,
# the IPv6 bind check (try_to_bind_ipv6_address), the troubleshooting copy in /tmp.
set -u

RELEASE=$(cat /etc/testbed/release 2> /dev/null || echo 4.16)
case "$RELEASE" in 4.14 | 4.15 | 4.16) ;; *) echo "configure-ovs (testbed): release $RELEASE is not modelled (4.14, 4.15, 4.16)" >&2; exit 2 ;; esac
at_least() { [ "$(printf '%s\n%s\n' "$1" "$RELEASE" | sort -V | head -n1)" = "$1" ]; }

ETC_DIR=/etc/NetworkManager/system-connections
RUN_DIR=/run/NetworkManager/system-connections
# MCO release-4.14/4.15: profiles are made where nmcli stores them (ETC_DIR: NM_CONN_CONF_PATH) and moved to RUN_DIR at
# the end (set_nm_conn_files, NM_CONN_SET_PATH defaults to the run path). MCO release-4.16: made in RUN_DIR directly
# (`nmcli c add save no`, `nmcli connection clone --temporary`), nothing to move.
if at_least 4.16; then MAKE_DIR=$RUN_DIR; else MAKE_DIR=$ETC_DIR; fi
BRIDGE=br-ex
# MCO release-4.14+: BRIDGE_METRIC=48, lower than anything NetworkManager picks by default
BRIDGE_METRIC=48
CLONE_SUFFIX=-slave-ovs-clone
HINT_FILE=/var/lib/ovnk/iface_default_hint
IP_HINT_FILE=/run/nodeip-configuration/primary-ip
DEFAULT_BRIDGE_FILE=/etc/ovnk/default_bridge
SETTLE=${CONFIGURE_OVS_RELOAD_SETTLE:-10}
ROUTE_WAIT=${CONFIGURE_OVS_ROUTE_WAIT:-5}

# MCO release-4.14+: every managed profile name, with and without the .nmconnection suffix, plus the slave clones
managed_files() {
  local dir=$1 n
  for n in "$BRIDGE" "ovs-if-$BRIDGE" "ovs-port-$BRIDGE" ovs-if-phys0 ovs-port-phys0; do echo "$dir/$n" "$dir/$n.nmconnection"; done
  compgen -G "$dir/*$CLONE_SUFFIX.nmconnection" || true
  compgen -G "$dir/*$CLONE_SUFFIX" || true
}

# MCO release-4.14+ rm_nm_conn_files: deletes the managed files (and NetworkManager's temporary files beside them)
remove_managed_files() {
  local f t files
  files=$(managed_files "$1")
  for f in $files; do
    if [ -f "$f" ]; then rm -f "$f"; echo "Removed nmconnection file $f"; nm_config_changed=1; fi
  done
  # then what is left beside them (NetworkManager's temporary files), once the profiles themselves are gone
  for f in $files; do
    for t in $(compgen -G "$f.*" || true); do rm -f "$t"; echo "Removed nmconnection temporary file $t"; nm_config_changed=1; done
  done
}

# MCO release-4.14+ copy_nm_conn_files + set_nm_conn_files (4.14/4.15 only: 4.16 made them in RUN_DIR already)
move_managed_files_to_run() {
  at_least 4.16 && return 0
  local f
  for f in $(managed_files "$ETC_DIR"); do
    [ -f "$f" ] || continue
    if ! cmp --silent "$f" "$RUN_DIR/$(basename "$f")"; then echo "Copying configuration $(basename "$f")"; cp -f "$f" "$RUN_DIR/$(basename "$f")"; fi
  done
  remove_managed_files "$ETC_DIR"
  nmcli connection reload
}

# MCO release-4.14+ reload_profiles_nm: reload, wait, and connect again a physical device left disconnected; a profile
# NetworkManager generates for it then is moved to /run (ephemeral)
reload_profiles_nm() {
  [ "${nm_config_changed:-0}" -eq 0 ] && return 0
  nmcli connection reload
  sleep "$SETTLE"
  local dev state i
  for dev in "$@"; do
    [ -n "$dev" ] || continue
    state=$(nmcli -g GENERAL.STATE device show "$dev" 2> /dev/null || echo "")
    if [[ "$state" =~ disconnected ]]; then
      local existed=""
      [ -f "$ETC_DIR/$dev" ] || [ -f "$ETC_DIR/$dev.nmconnection" ] && existed=yes
      for i in {1..10}; do
        echo "Attempt $i to connect device $dev"
        nmcli device connect "$dev" && break
        sleep 5
      done
      if [ -z "$existed" ]; then
        for f in "$ETC_DIR/$dev" "$ETC_DIR/$dev.nmconnection"; do [ -f "$f" ] && { cp -f "$f" "$RUN_DIR/"; rm -f "$f"; echo "Removed nmconnection file $f"; }; done
        nmcli connection reload
      fi
    fi
    echo "Waiting for interface $dev to activate..."
    timeout 60 bash -c "until nmcli -g DEVICE,STATE c | grep -q '^$dev:activated'; do sleep 5; done" || echo "Warning: $dev did not activate"
  done
  nm_config_changed=0
}

# MCO release-4.14+ rollback_nm (remove_all_ovn_bridges): the managed files go from /etc and from /run (4.14/4.15: the
# conf path /etc and the set path /run; 4.16: the run path, the set path, and /etc again "shouldn't be necessary,
# OCPBUGS-41489"), the bridge from the OVS database, then NetworkManager reloads
rollback_nm() {
  local phys0
  phys0=$(nmcli -g connection.interface-name connection show ovs-if-phys0 2> /dev/null || echo "")
  echo "Reverting any previous OVS configuration"
  remove_managed_files "$ETC_DIR"
  remove_managed_files "$RUN_DIR"
  ovs-vsctl --timeout=30 --if-exists del-br "$BRIDGE"
  echo "OVS configuration successfully reverted"
  reload_profiles_nm "$phys0"
}

# MCO release-4.14+ add_nm_conn: a new profile, never autoconnected; 4.16 keeps it in memory (save no: /run)
add_nm_conn() {
  local name=$1
  shift
  if at_least 4.16; then nmcli c add save no con-name "$name" "$@" connection.autoconnect no; else nmcli c add con-name "$name" "$@" connection.autoconnect no; fi
}

# MCO release-4.14 `nmcli c mod`; release-4.16 mod_nm_conn edits the /run keyfile offline so it stays in /run (here
# `--temporary`, which keeps it in /run the same way; 4.16 avoids it only for an SELinux denial RHCOS has)
mod_nm_conn() {
  local name=$1
  shift
  if at_least 4.16; then nmcli c modify --temporary "$name" "$@"; else nmcli c modify "$name" "$@"; fi
}

print_state() {
  echo "Current device, connection, interface and routing state:"
  nmcli -g all device | grep -v unmanaged
  nmcli -g all connection
  ip -d address show
  ip route show
  ip -6 route show
}

# MCO release-4.14+ get_iface_default_hint: the previous run's uplink, if it still exists and is not a bridge
valid_hint() {
  local h
  [ -f "$HINT_FILE" ] || return 0
  h=$(cat "$HINT_FILE")
  [ -n "$h" ] && [ "$h" != br-ex ] && [ "$h" != br-ex1 ] && [ -d "/sys/class/net/$h" ] && echo "$h"
  return 0
}

default_route_dev() {
  local v=$1
  ip "$v" route show default | grep -v br-ex1 | awk '{ if ($4 == "dev") { print $5; exit } }'
}

# MCO release-4.14 get_nodeip_interface, release-4.15+ get_default_bridge_interface: which interface br-ex goes on
bridge_interface() {
  local iface="" counter=0 hint ip_hint
  # MCO release-4.15+: /etc/ovnk/default_bridge, when present, names it
  if at_least 4.15 && [ -f "$DEFAULT_BRIDGE_FILE" ]; then
    iface=$(cat "$DEFAULT_BRIDGE_FILE")
    [ -n "$iface" ] || { echo "ERROR: User specified bridge file detected without any data" >&2; exit 1; }
    echo "$iface"
    return
  fi
  # the interface holding the node IP nodeip-configuration chose (/run/nodeip-configuration/primary-ip), if any
  if [ -f "$IP_HINT_FILE" ]; then
    ip_hint=$(cat "$IP_HINT_FILE")
    iface=$(ip -j addr | jq -r --arg ip "$ip_hint" 'first(.[] | select(any(.addr_info[]; .local == $ip) and .ifname != "br-ex1")) | .ifname')
    [ -n "$iface" ] && [ "$iface" != null ] && { echo "$iface"; return; }
    iface=""
  fi
  # the default route's interface, IPv4 then IPv6, 12 looks 5 s apart
  while [ "$counter" -lt 12 ]; do
    iface=$(default_route_dev -4)
    [ -n "$iface" ] && break
    iface=$(default_route_dev -6)
    [ -n "$iface" ] && break
    counter=$((counter + 1))
    sleep "$ROUTE_WAIT"
  done
  if [ "$iface" != br-ex ] && [ "$iface" != br-ex1 ]; then
    # the previous uplink wins while it has a default route (one more look than the loop above had left)
    hint=$(valid_hint)
    if [ -n "$hint" ] && [ "$hint" != "$iface" ]; then
      while [ "$counter" -le 12 ]; do
        if [ -n "$(ip route show default dev "$hint")" ] || [ -n "$(ip -6 route show default dev "$hint")" ]; then iface=$hint; break; fi
        counter=$((counter + 1))
        sleep "$ROUTE_WAIT"
      done
    fi
    [ -n "$iface" ] && echo "$iface" >| "$HINT_FILE"
  fi
  echo "$iface"
}

# MCO release-4.14+ replace_connection_master: ports of the old profile (bond/team members) get clones under the new one
replace_connection_master() {
  local old=$1 new=$2 uuid name
  for uuid in $(nmcli -g UUID connection show); do
    [ "$(nmcli -g connection.master connection show uuid "$uuid")" = "$old" ] || continue
    [ "$(nmcli -g GENERAL.STATE connection show "$uuid")" = activated ] || [ "$(nmcli -g connection.autoconnect connection show "$uuid")" = yes ] || continue
    name="$(nmcli -g connection.id connection show uuid "$uuid")$CLONE_SUFFIX"
    nmcli connection show id "$name" &> /dev/null && nmcli connection delete id "$name" &> /dev/null
    if at_least 4.16; then nmcli connection clone --temporary "$uuid" "$name" &> /dev/null; else nmcli connection clone "$uuid" "$name" &> /dev/null; fi
    mod_nm_conn "$name" connection.master "$new" connection.autoconnect-priority 100 connection.autoconnect no
    echo "Replaced master $old with $new for slave profile $name"
  done
}

# The keyfile of a clone of the uplink's profile turned into br-ex's internal interface. nmcli cannot change a profile's
# type: the real script edits the [connection] section of the clone's keyfile (MCO release-4.14: type, master,
# slave-type, autoconnect=false, multi-connect dropped, [ovs-interface] type=internal; release-4.16: only the type in the
# file, the rest through nmcli) and loads it again.
retype_clone_keyfile() {
  local file=$1 port_uuid=$2
  awk -v port="$port_uuid" '
    /^\[/ { sect = $0 }
    sect == "[connection]" && /^(multi-connect|autoconnect)=/ { next }
    sect == "[connection]" && /^type=/ { print "type=ovs-interface"; next }
    { print }
    $0 == "[connection]" { print "autoconnect=false"; print "slave-type=ovs-port"; print "master=" port }
    END { print ""; print "[ovs-interface]"; print "type=internal" }
  ' "$file" > "$file.testbed" && cat "$file.testbed" > "$file" && rm -f "$file.testbed"
}

# MCO release-4.14+ convert_to_bridge
convert_to_bridge() {
  local iface=$1
  if [ "$iface" = "$BRIDGE" ]; then
    # the real script prints ${bridge-name}: bash expands it to "name" (no variable `bridge` is set)
    echo "Networking already configured and up for name!"
    return 0
  fi
  nm_config_changed=1
  if [ -z "$iface" ]; then
    echo "ERROR: Unable to find default gateway interface"
    exit 1
  fi
  local mac mtu old_conn old_type
  mac=$(< "/sys/class/net/$iface/address") || { echo "Unable to determine default interface MAC"; exit 1; }
  echo "MAC address found for iface: $iface: $mac"
  mtu=$(ip link show "$iface" | awk '{print $5; exit}')
  [ -n "$mtu" ] || mtu=1500
  echo "MTU found for iface: $iface: $mtu"
  old_conn=$(nmcli -g UUID,DEVICE connection show --active | awk -F: -v dev="$iface" '$2 == dev { print $1; exit }')
  if [ -z "$old_conn" ]; then
    echo "ERROR: cannot find connection for interface: $iface"
    exit 1
  fi
  old_type=$(nmcli --get-values connection.type connection show "$old_conn")
  if [ "$old_type" != 802-3-ethernet ]; then
    echo "ERROR: testbed stand-in: a $old_type uplink is not modelled (this kernel has no VLAN or bond modules)"
    exit 1
  fi
  if ! nmcli connection show "$BRIDGE" &> /dev/null; then
    ovs-vsctl --timeout=30 --if-exists del-br "$BRIDGE"
    add_nm_conn "$BRIDGE" type ovs-bridge conn.interface "$BRIDGE" 802-3-ethernet.mtu "$mtu" connection.autoconnect-slaves 1
  fi
  # MCO release-4.16 names slave-type ovs-bridge explicitly and the port's master by UUID; 4.14 by name
  local port_type=()
  at_least 4.16 && port_type=(slave-type ovs-bridge)
  if ! nmcli connection show ovs-port-phys0 &> /dev/null; then
    ovs-vsctl --timeout=30 --if-exists del-port "$BRIDGE" "$iface"
    add_nm_conn ovs-port-phys0 type ovs-port conn.interface "$iface" "${port_type[@]}" master "$BRIDGE" connection.autoconnect-slaves 1
  fi
  if ! nmcli connection show "ovs-port-$BRIDGE" &> /dev/null; then
    ovs-vsctl --timeout=30 --if-exists del-port "$BRIDGE" "$BRIDGE"
    add_nm_conn "ovs-port-$BRIDGE" type ovs-port conn.interface "$BRIDGE" "${port_type[@]}" master "$BRIDGE"
  fi
  if ! nmcli connection show ovs-if-phys0 &> /dev/null; then
    ovs-vsctl --timeout=30 --if-exists destroy interface "$iface"
    local master=ovs-port-phys0 slave=()
    if at_least 4.16; then master=$(nmcli -g connection.uuid connection show ovs-port-phys0); slave=(slave-type ovs-port); fi
    add_nm_conn ovs-if-phys0 type 802-3-ethernet conn.interface "$iface" master "$master" "${slave[@]}" \
      connection.autoconnect-priority 100 connection.autoconnect-slaves 1 802-3-ethernet.mtu "$mtu" 802-3-ethernet.cloned-mac-address "$mac"
  fi
  local new_conn port_conn
  new_conn=$(nmcli -g connection.uuid connection show ovs-if-phys0)
  port_conn=$(nmcli -g connection.uuid connection show "ovs-port-$BRIDGE")
  replace_connection_master "$old_conn" "$new_conn"
  replace_connection_master "$iface" "$new_conn"

  local m4 m6 a4 a6
  m4=$(nmcli -g ipv4.method connection show "$old_conn")
  m6=$(nmcli -g ipv6.method connection show "$old_conn")
  a4=$(nmcli -g ipv4.addresses connection show "$old_conn")
  a6=$(nmcli -g ipv6.addresses connection show "$old_conn")
  if ! nmcli connection show "ovs-if-$BRIDGE" &> /dev/null; then
    ovs-vsctl --timeout=30 --if-exists destroy interface "$BRIDGE"
    if [ "$m4" = manual ] || [ -n "$a4" ] || [ "$m6" = manual ] || [ -n "$a6" ]; then
      # MCO release-4.14+: a static (or DHCP plus static) uplink is cloned, so every IP setting carries over
      echo "Static IP addressing detected on default gateway connection: $old_conn"
      if at_least 4.16; then nmcli connection clone --temporary "$old_conn" "ovs-if-$BRIDGE" &> /dev/null; else nmcli connection clone "$old_conn" "ovs-if-$BRIDGE" &> /dev/null; fi
      local files
      mapfile -t files < <(compgen -G "$MAKE_DIR/ovs-if-$BRIDGE*" || true)
      if [ "${#files[@]}" -ne 1 ] || [ ! -f "${files[0]}" ]; then
        echo "ERROR: could not find ovs-if-$BRIDGE conn file after cloning from $old_conn"
        exit 1
      fi
      retype_clone_keyfile "${files[0]}" "$port_conn"
      nmcli c load "${files[0]}"
      mod_nm_conn "ovs-if-$BRIDGE" conn.interface "$BRIDGE" 802-3-ethernet.mtu "$mtu" 802-3-ethernet.cloned-mac-address "$mac" \
        ipv4.route-metric "$BRIDGE_METRIC" ipv6.route-metric "$BRIDGE_METRIC"
      echo "Loaded new ovs-if-$BRIDGE connection file: ${files[0]}"
    else
      local extra=() v
      [ -n "$(ip -4 -o addr show dev "$iface")" ] && extra+=(ipv4.may-fail no)
      [ -n "$(ip -6 -o addr show dev "$iface" scope global)" ] && extra+=(ipv6.may-fail no)
      v=$(nmcli --get-values ipv4.dhcp-client-id connection show "$old_conn")
      [ -n "$v" ] && extra+=(ipv4.dhcp-client-id "$v")
      v=$(nmcli --get-values ipv6.dhcp-duid connection show "$old_conn")
      [ -n "$v" ] && extra+=(ipv6.dhcp-duid "$v")
      v=$(nmcli --get-values ipv6.addr-gen-mode connection show "$old_conn")
      [ -n "$v" ] && extra+=(ipv6.addr-gen-mode "$v")
      add_nm_conn "ovs-if-$BRIDGE" type ovs-interface slave-type ovs-port conn.interface "$BRIDGE" master "$port_conn" \
        802-3-ethernet.mtu "$mtu" 802-3-ethernet.cloned-mac-address "$mac" ipv4.method "$m4" ipv4.route-metric "$BRIDGE_METRIC" \
        ipv6.method "$m6" ipv6.route-metric "$BRIDGE_METRIC" "${extra[@]}"
    fi
  fi
}

# MCO release-4.14+ activate_nm_connections: in order, each up to 10 tries 5 s apart, then autoconnect on
activate_nm_connections() {
  local conn i s
  for conn in "$@"; do
    if [ "$(nmcli -g GENERAL.STATE connection show "$conn")" = activated ]; then
      echo "Connection $conn already activated"
      mod_nm_conn "$conn" connection.autoconnect yes
      continue
    fi
    s=1
    for i in {1..10}; do
      echo "Attempt $i to bring up connection $conn"
      nmcli conn up "$conn" && s=0 && break || s=$?
      sleep 5
    done
    if [ "$s" -ne 0 ]; then
      echo "ERROR: Cannot bring up connection $conn after $i attempts"
      return "$s"
    fi
    echo "Brought up connection $conn successfully"
    mod_nm_conn "$conn" connection.autoconnect yes
  done
}

# MCO release-4.14+ handle_exit: a failed run rolls back what it did
handle_exit() {
  local e=$?
  if [ "$e" -eq 0 ]; then
    print_state
    exit 0
  fi
  echo "ERROR: configure-ovs exited with error: $e"
  print_state
  echo "Attempting to restore previous configuration..."
  rollback_nm
  print_state
  exit "$e"
}

# MCO release-4.15+ handle_termination: TERM/INT during a run exits with an error, so handle_exit rolls back
handle_termination() {
  echo "WARNING: configure-ovs has been requested to terminate, quitting..."
  exit 1
}

configure_ovs() {
  set -eu
  at_least 4.15 && trap handle_termination TERM INT
  trap handle_exit EXIT
  nm_config_changed=0
  if ! rpm -qa | grep -q openvswitch; then
    echo "Warning: Openvswitch package is not installed!"
    exit 1
  fi
  print_state
  if [ "$1" = OVNKubernetes ]; then
    mkdir -p /etc/ovnk /var/lib/ovnk
    # MCO release-4.14+: without a valid hint, the interface ovs-if-phys0 names becomes the hint
    if [ -z "$(valid_hint)" ]; then
      local current
      current=$(nmcli -g connection.interface-name connection show ovs-if-phys0 2> /dev/null || echo "")
      [ -n "$current" ] && echo "$current" >| "$HINT_FILE"
    fi
    # MCO release-4.14+: "on every boot we rollback and generate the configuration again"
    if [ ! -f /run/configure-ovs-boot-done ]; then
      echo "Running on boot, restoring previous configuration before proceeding..."
      rollback_nm
      print_state
    fi
    touch /run/configure-ovs-boot-done
    local iface
    iface=$(bridge_interface)
    if [ "$iface" != "$BRIDGE" ] && [ -z "$(nmcli connection show --active "$BRIDGE" 2> /dev/null)" ]; then
      echo "Bridge $BRIDGE is not active, restoring previous configuration before proceeding..."
      rollback_nm
      print_state
    fi
    convert_to_bridge "$iface"
    ovs-vsctl --timeout=30 --if-exists del-br br0
    local connections=("$BRIDGE" ovs-if-phys0) c
    while IFS= read -r c; do [[ "$c" == *"$CLONE_SUFFIX" ]] && connections+=("$c"); done < <(nmcli -g NAME c)
    connections+=("ovs-if-$BRIDGE")
    activate_nm_connections "${connections[@]}"
    move_managed_files_to_run
  elif [ "$1" = OpenShiftSDN ]; then
    rollback_nm
    ovs-vsctl --timeout=30 --if-exists del-br br-int -- --if-exists del-br br-local
  fi
}

touch /var/run/ovs-config-executed
# MCO release-4.16: a node whose network nmstate manages entirely (/etc/nmstate/openshift/applied) is left alone
if at_least 4.16 && [ -e /etc/nmstate/openshift/applied ]; then
  echo "Skipping configure-ovs due to manual network configuration"
  exit 0
fi
# MCO release-4.14+: a failed run is retried inside the same start, RETRY apart (default 15m; the unit stays
# "activating"). MCO release-4.15+: TERM/INT during a run disables the retries, TERM/INT while waiting ends it.
RETRY="${RETRY-15m}"
while true; do
  at_least 4.15 && trap 'echo "WARNING: termination requested, disabling retries"; RETRY=""' INT TERM
  (configure_ovs "$@")
  e=$?
  at_least 4.15 && trap handle_termination INT TERM
  { [ "$e" -eq 0 ] || [ -z "$RETRY" ]; } && exit "$e"
  if at_least 4.15; then echo "configure-ovs failed, will retry after $RETRY"; else echo "configure_ovs failed, will retry after $RETRY"; fi
  touch /tmp/configure-ovs-retry
  sleep "$RETRY"
done
