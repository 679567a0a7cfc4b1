#!/usr/bin/env bash
# The stand-ins for host tools whose only effect a test looks at is that they were called, with what: agetty
# (`--reload`, at every banner change) and systemd-notify (READY=1, STATUS=…, WATCHDOG=1). They keep host-tool.cjs's
# contract — the call recorded in $STANDIN_DIR/calls.jsonl, a file $STANDIN_DIR/fail/<tool> makes it fail with
# that file's content — without starting Node for each call: about 130 ms of CPU a start on the 2-core reference
# machine, and a relocation reloads agetty about sixteen times.
set -u
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

args=''
for a in "$@"; do args+=${args:+,}$(json_string "$a"); done
env='{}'
if [ -n "${NOTIFY_SOCKET+set}" ]; then env="{\"NOTIFY_SOCKET\":$(json_string "$NOTIFY_SOCKET")}"; fi
now=${EPOCHREALTIME/./}
printf '{"tool":%s,"args":[%s],"time":%s,"env":%s}\n' "$(json_string "$tool")" "$args" "${now:0:13}" "$env" >>"$STANDIN_DIR/calls.jsonl"

if [ -e "$STANDIN_DIR/fail/$tool" ]; then
  if [ -s "$STANDIN_DIR/fail/$tool" ]; then cat "$STANDIN_DIR/fail/$tool" >&2; else printf '%s : injected failure\n' "$tool" >&2; fi
  exit 1
fi
exit 0
