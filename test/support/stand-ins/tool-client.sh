#!/usr/bin/env bash
# The stand-in tools of host-tool.cjs, called under each tool's name: the call goes to the test process's tool
# server (./tool-server.cjs, its port in the file $STANDIN_TOOL_SERVER names) over a local TCP connection, so a call
# costs a bash start instead of a Node start. Without a server (not started yet, or a caller that set none) the call
# runs in a Node process of its own, the same code either way.
set -u
export LC_ALL=C
tool=${0##*/}
here=$(dirname "$(readlink -f "$0")")
alone() {
  STANDIN_TOOL_NAME=$tool exec node "$here/host-tool.cjs" "$@"
}

port=''
if [ -n "${STANDIN_TOOL_SERVER:-}" ] && [ -f "$STANDIN_TOOL_SERVER" ]; then read -r port < "$STANDIN_TOOL_SERVER" || port=''; fi
[[ $port =~ ^[0-9]+$ ]] || alone "$@"
{ exec 3<> "/dev/tcp/127.0.0.1/$port"; } 2> /dev/null || alone "$@"

# What host-tool.cjs reads of its environment, and who called (systemctl reboot stops the caller, as systemd would).
export STANDIN_CALLER_PID=$PPID
envs=()
for name in STANDIN_DIR SIM_CONTROL_URL NOTIFY_SOCKET STANDIN_INTERNAL_IPS STANDIN_NODE_IPS STANDIN_CALLER_PID STANDIN_ROOT STANDIN_STOP_ON_REBOOT; do
  if [ -n "${!name+set}" ]; then envs+=("$name=${!name}"); fi
done
# stdin: what is already waiting when the call starts (`read -t 0`), as host-tool.cjs reads it as a program — a
# caller's stdin left open and empty (execFile's pipe) must not hold the call. No tool the agent calls reads stdin.
input=''
if [ ! -t 0 ] && read -r -t 0; then
  input=$(cat 2> /dev/null; printf x)
  input=${input%x}
fi
printf '%s\0' sno-tool/1 "$tool" "$PWD" "$#" "$@" "${#envs[@]}" "${envs[@]}" "${#input}" >&3
printf '%s' "$input" >&3

if ! IFS=' ' read -r code outlen errlen <&3; then
  printf '%s stand-in: the tool server ended during the call\n' "$tool" >&2
  exit 98
fi
if [ "$outlen" -gt 0 ]; then head -c "$outlen" <&3; fi
if [ "$errlen" -gt 0 ]; then head -c "$errlen" <&3 >&2; fi
exit "$code"
