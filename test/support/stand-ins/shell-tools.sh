#!/usr/bin/env bash
# The stand-ins for host tools simple enough to need no Node start per call (about 130 ms of CPU a start on the
# 2-core reference machine; a relocation reloads agetty about sixteen times, asks DNS a few and looks for media at
# every scan): agetty (`--reload`, at every banner change), systemd-notify (READY=1, STATUS=…, WATCHDOG=1), the
# node's resolvers `dig` and `getent`, and `lsblk` and `blkid` over the stand-in volumes. They keep host-tool.cjs's
# contract and answers: the call recorded in $STANDIN_DIR/calls.jsonl; a file $STANDIN_DIR/fail/<tool> makes agetty,
# systemd-notify, lsblk or blkid fail with that file's content, fail/getent or fail/getent-<name> makes getent find
# nothing.
set -u
export LC_ALL=C
tool=${0##*/}
if [ -z "${STANDIN_DIR:-}" ]; then
  printf '%s stand-in: STANDIN_DIR is not set\n' "$tool" >&2
  exit 99
fi

# One argument as a JSON string: backslash, quote and every control character escaped.
json_string() {
  local s=$1 out='' c i
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/\\r}
  s=${s//$'\t'/\\t}
  if [[ $s == *[$'\x01'-$'\x1f']* ]]; then
    for ((i = 0; i < ${#s}; i++)); do
      c=${s:i:1}
      if [[ $c == [$'\x01'-$'\x1f'] ]]; then printf -v c '\\u%04x' "'$c"; fi
      out+=$c
    done
    s=$out
  fi
  printf '"%s"' "$s"
}

# The volumes of $STANDIN_DIR/devices (as host-tool.cjs lists them: folders, in byte order, each with <name>.label
# and <name>.fstype, <name>.uuid beside it). A label with bytes beyond printable ASCII goes to host-tool.cjs, whose trim and JSON
# are JavaScript's (a hostile label's Unicode spaces and escapes), so both answer alike.
devices=()
if [ "$tool" = lsblk ] || [ "$tool" = blkid ]; then
  for d in "$STANDIN_DIR"/devices/*/; do
    [ -d "$d" ] || continue
    d=${d%/}
    devices+=("${d##*/}")
    if [ -f "$d.label" ] && LC_ALL=C grep -q '[^ -~]' "$d.label"; then
      STANDIN_TOOL_NAME=$tool exec node "$(dirname "$(readlink -f "$0")")/host-tool.cjs" "$@"
    fi
  done
fi

# A value of a device's file, with blanks trimmed at both ends (printable ASCII: see above).
trimmed() {
  local v
  v=$(cat -- "$1") || v=''
  v=${v#"${v%%[![:space:]]*}"}
  v=${v%"${v##*[![:space:]]}"}
  printf '%s' "$v"
}

args=''
for a in "$@"; do args+=${args:+,}$(json_string "$a"); done
env='{}'
if [ -n "${NOTIFY_SOCKET+set}" ]; then env="{\"NOTIFY_SOCKET\":$(json_string "$NOTIFY_SOCKET")}"; fi
now=${EPOCHREALTIME/./}
printf '{"tool":%s,"args":[%s],"time":%s,"env":%s}\n' "$(json_string "$tool")" "$args" "${now:0:13}" "$env" >>"$STANDIN_DIR/calls.jsonl"

case $tool in
  agetty | systemd-notify)
    if [ -e "$STANDIN_DIR/fail/$tool" ]; then
      if [ -s "$STANDIN_DIR/fail/$tool" ]; then cat "$STANDIN_DIR/fail/$tool" >&2; else printf '%s : injected failure\n' "$tool" >&2; fi
      exit 1
    fi
    ;;
  dig)
    # `dig +short @SERVER NAME TYPE`: the site's DNS. It knows the names listed in $STANDIN_DIR/site-dns, one
    # "NAME ADDRESS" a line (a test publishes the new names there); anything else gets no answer, as NXDOMAIN
    # prints nothing with +short. No query leaves this machine.
    name=''
    for a in "$@"; do
      case $a in +* | @*) ;; *.*) if [ -z "$name" ]; then name=$a; fi ;; esac
    done
    type=${!#}
    if [ -r "$STANDIN_DIR/site-dns" ]; then
      while read -r n address _ || [ -n "${n:-}" ]; do
        if [ "$n" = "$name" ] && [ -n "${address:-}" ]; then
          if [ "$type" = AAAA ]; then
            if [[ $address == *:* ]]; then printf '%s\n' "$address"; fi
          elif [[ $address != *:* ]]; then
            printf '%s\n' "$address"
          fi
        fi
        n=''
      done <"$STANDIN_DIR/site-dns"
    fi
    ;;
  getent)
    # `getent ahosts NAME`: the node's resolver. The node-local dnsmasq's `address=/domain/ip` records under
    # $STANDIN_ROOT/etc/dnsmasq.d answer for a name and everything below it, the longest domain first (dnsmasq(8)
    # --address); any other name resolves to 192.0.2.10, the site's DNS stand-in.
    name=${2:-}
    if [ -e "$STANDIN_DIR/fail/getent" ] || [ -e "$STANDIN_DIR/fail/getent-$name" ]; then exit 2; fi
    ip=192.0.2.10
    best=''
    dir=${STANDIN_ROOT:+$STANDIN_ROOT/etc/dnsmasq.d}
    if [ -n "$dir" ] && [ -d "$dir" ]; then
      for file in "$dir"/*.conf; do
        [ -f "$file" ] || continue
        while read -r line || [ -n "${line:-}" ]; do
          if [[ $line =~ ^address=/([^/]+)/([^[:space:]]+)$ ]]; then
            domain=${BASH_REMATCH[1]}
            if { [ "$name" = "$domain" ] || [[ $name == *".$domain" ]]; } && [ ${#domain} -gt ${#best} ]; then
              best=$domain
              ip=${BASH_REMATCH[2]}
            fi
          fi
          line=''
        done <"$file"
      done
    fi
    printf '%s      STREAM %s\n%s      DGRAM\n' "$ip" "$name" "$ip"
    ;;
  lsblk | blkid)
    if [ -e "$STANDIN_DIR/fail/$tool" ]; then
      if [ -s "$STANDIN_DIR/fail/$tool" ]; then cat "$STANDIN_DIR/fail/$tool" >&2; else printf '%s : injected failure\n' "$tool" >&2; fi
      exit 1
    fi
    # Without udev (as on these dev machines) lsblk shows no labels; $STANDIN_DIR/udev turns them on.
    udev=false
    if [ -e "$STANDIN_DIR/udev" ]; then udev=true; fi
    rows=()
    blocks=()
    for name in "${devices[@]}"; do
      base=$STANDIN_DIR/devices/$name
      label=''
      has_label=false
      if [ -f "$base.label" ]; then label=$(trimmed "$base.label"); has_label=true; fi
      fstype=vfat
      if [ -f "$base.fstype" ]; then fstype=$(trimmed "$base.fstype"); fi
      uuid=UUID-$name
      if [ -f "$base.uuid" ]; then uuid=$(trimmed "$base.uuid"); fi
      if [ "$tool" = lsblk ]; then
        if $udev; then
          if $has_label; then l=$(json_string "$label"); else l=null; fi
          rows+=("{\"name\":$(json_string "$name"),\"label\":$l,\"fstype\":$(json_string "$fstype"),\"path\":$(json_string "/dev/$name"),\"uuid\":$(json_string "$uuid")}")
        else
          rows+=("{\"name\":$(json_string "$name"),\"label\":null,\"fstype\":null,\"path\":$(json_string "/dev/$name"),\"uuid\":null}")
        fi
      elif [ -n "$label" ]; then
        blocks+=("DEVNAME=/dev/$name"$'\n'"LABEL=$label"$'\n'"UUID=$uuid"$'\n'"TYPE=$fstype")
      fi
    done
    if [ "$tool" = lsblk ]; then
      (IFS=,; printf '{"blockdevices":[%s]}' "${rows[*]}")
    else
      if [ ${#blocks[@]} -eq 0 ]; then exit 2; fi
      out=''
      for b in "${blocks[@]}"; do out+=${out:+$'\n\n'}$b; done
      printf '%s\n' "$out"
    fi
    ;;
  *)
    printf 'unknown stand-in %s\n' "$tool" >&2
    exit 127
    ;;
esac
exit 0
