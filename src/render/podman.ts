// The podman runtime (DESIGN.md section 2): RHCOS ships no Node.js, so the agent runs in a digest-pinned Node
// image with the host mounted at /host. These are the launcher script the unit runs and its settings file.
import { BANNER_PATH } from '../paths';
import { LAUNCHER_FAILURES_PATH, MC_BUNDLE_PATH, NODE_IMAGE_ARCHIVE_PATH, NODE_IMAGE_ID_SUFFIX, NODE_IMAGE_SHA256_SUFFIX, PULL_AUTHFILE, RUNTIME_ENV_PATH } from './layout';

export class ImageRefError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageRefError';
  }
}

const DIGEST_RE = /@sha256:[0-9a-f]{64}$/;
// A conservative form of the reference grammar (distribution/reference): registry host[:port], path
// components of lowercase alphanumerics and separators, optional tag, mandatory sha256 digest.
const REF_RE = /^(?:[a-zA-Z0-9.-]+(?::[0-9]+)?\/)?[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?@sha256:[0-9a-f]{64}$/;

/**
 * Accepts only digest-pinned references: a tag can move, and the node must run, years later and offline, exactly
 * the image that was tested at the factory.
 */
export function parseNodeImageRef(ref: string): string {
  const trimmed = ref.trim();
  if (!DIGEST_RE.test(trimmed)) {
    throw new ImageRefError(
      `--node-image: "${trimmed}" is not pinned by digest. Expected NAME@sha256:<64 hex digits>, e.g. ` +
        'registry.access.redhat.com/ubi9/nodejs-24-minimal@sha256:…; find the digest with ' +
        '`skopeo inspect docker://NAME:TAG --format {{.Digest}}`.',
    );
  }
  if (!REF_RE.test(trimmed)) {
    throw new ImageRefError(`--node-image: "${trimmed}" is not a valid image reference (expected [REGISTRY[:PORT]/]PATH[:TAG]@sha256:DIGEST, lowercase path).`);
  }
  return trimmed;
}

export interface PodmanRuntimeSettings {
  image: string;
  archive: string;
  bundle: string;
}

export function defaultPodmanSettings(image: string): PodmanRuntimeSettings {
  return { image, archive: NODE_IMAGE_ARCHIVE_PATH, bundle: MC_BUNDLE_PATH };
}

const ENV_KEYS = {
  runtime: 'SNO_RECONFIGURE_RUNTIME',
  image: 'SNO_RECONFIGURE_NODE_IMAGE',
  archive: 'SNO_RECONFIGURE_NODE_IMAGE_ARCHIVE',
  bundle: 'SNO_RECONFIGURE_BUNDLE',
} as const;

/** Values are plain tokens (validated), so the file reads the same for systemd's EnvironmentFile= and for sh. */
export function renderRuntimeEnv(s: PodmanRuntimeSettings): string {
  for (const [k, v] of Object.entries(s)) {
    if (!/^[A-Za-z0-9@:/._-]+$/.test(v)) throw new Error(`runtime setting ${k} has characters a settings file cannot carry: ${JSON.stringify(v)}`);
  }
  return [
    '# sno-reconfigure runtime settings (rendered by `sno-reconfigure render --runtime podman`).',
    '# Read by sno-reconfigure.service (EnvironmentFile=), sno-reconfigure-podman and `sno-reconfigure prepare`.',
    `${ENV_KEYS.runtime}=podman`,
    `${ENV_KEYS.image}=${s.image}`,
    `${ENV_KEYS.archive}=${s.archive}`,
    `${ENV_KEYS.bundle}=${s.bundle}`,
    '',
  ].join('\n');
}

/** Reads runtime.env back (`prepare` uses it to save the image archive). undefined: not the podman runtime. */
export function parseRuntimeEnv(text: string): PodmanRuntimeSettings | undefined {
  const vars = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m && m[1] && m[2] !== undefined) vars.set(m[1], m[2].trim());
  }
  if (vars.get(ENV_KEYS.runtime) !== 'podman') return undefined;
  const image = vars.get(ENV_KEYS.image);
  const archive = vars.get(ENV_KEYS.archive);
  const bundle = vars.get(ENV_KEYS.bundle);
  if (!image || !archive || !bundle) throw new Error(`${RUNTIME_ENV_PATH}: missing ${[!image && ENV_KEYS.image, !archive && ENV_KEYS.archive, !bundle && ENV_KEYS.bundle].filter(Boolean).join(', ')}`);
  return { image: parseNodeImageRef(image), archive, bundle };
}

/** A root shell's PATH on RHEL/RHCOS: where the host tools run through `chroot /host` are found. */
const HOST_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Node paths the launcher writes or reads besides its settings (tests point them into a temp dir). */
export interface LauncherPaths {
  banner: string;
  failures: string;
  authfile: string;
}

const LAUNCHER_PATHS: LauncherPaths = { banner: BANNER_PATH, failures: LAUNCHER_FAILURES_PATH, authfile: PULL_AUTHFILE };

/**
 * The launcher. Settings come from the environment (runtime.env through the unit), so one script serves every
 * image. Why each step and podman option:
 * - The image is run by the ID `prepare` recorded next to the archive: unlike NAME@sha256:DIGEST it still
 *   resolves after a save/load round trip (see NODE_IMAGE_ARCHIVE_PATH). Without that record (prepare not run),
 *   the digest reference, which resolves as long as the pulled image is in storage.
 * - `image exists || load -i`: kubelet image GC and crio-wipe can remove an unused image; the archive stays. Its
 *   sha256 is checked first: a truncated archive must be reported as damaged, not as a podman error.
 * - Only the commands a person runs pull (from PULL_AUTHFILE's registries) when there is neither image nor archive:
 *   that is how `prepare`, which saves the archive, can run on a fresh factory node. `run` never pulls: the
 *   site may have no registry access, and a missing image is an error to show, not a download attempt
 *   (`--pull=never`).
 * - A failed `run` launch writes the console banner itself (the agent, which normally does, never started) and
 *   waits before exiting, longer after each failure since boot (30 s, doubling up to 16 min): RestartSec= alone would retry every 30 s forever, and systemd 252 (RHCOS 9) has no
 *   RestartSteps=. The wait runs in the unit's start-up, within TimeoutStartSec=.
 * - `--privileged --security-opt label=disable --pid=host --net=host --uts=host -v /:/host`: the agent drives the
 *   host (systemctl, nmstatectl, mount) through `chroot /host`, sees host PIDs (systemd-notify's credentials)
 *   and the host's hostname and network.
 * - Only `run` owns the container name `sno-reconfigure` and `--replace`s it (a container left over from a power
 *   cut must not block the next start). Every other command gets a name of its own and no --replace: `status`
 *   run by the technician must never replace, i.e. stop, the running agent (it exits 0 on SIGTERM and
 *   Restart=on-failure would not bring it back). `run|plan|status|prepare|renew-certificates` act on the host: --root /host.
 * - `--cgroups=split` + the unit's Delegate=yes (run only): conmon and the container stay inside the unit's
 *   cgroup, so NotifyAccess=all accepts their messages and stopping the unit stops them. Split needs a unit's
 *   cgroup, so a command run from a login shell uses podman's default.
 * - `--sdnotify=ignore`: podman neither proxies the socket nor sends MAINPID/READY of its own; the agent reports
 *   READY, STATUS, WATCHDOG itself through the host's systemd-notify (`chroot /host`: ubi-minimal has none,
 *   runtime-libs.md section 2). Podman then drops NOTIFY_SOCKET from its own environment, so the value is
 *   passed explicitly (containers/podman libpod/oci_conmon_linux.go startCommand).
 * - WATCHDOG_PID is not passed: it names the launcher's PID, and the agent would conclude the pings are not its own.
 * - `--log-driver=passthrough` + JOURNAL_STREAM (run only): the container writes straight into the unit's journal
 *   stream, so the agent's `<N>` priority prefixes reach journald (src/log.ts). Passthrough needs that stream;
 *   the other commands talk to the terminal (`-i`, and `-t` on a terminal).
 * - `--user 0:0`: the ubi Node images default to uid 1001.
 * - `--env PATH=`: `chroot /host TOOL` looks TOOL up with the container's PATH, so it must be a root shell's PATH on
 *   the host (blkid, agetty, nmstatectl live in /usr/sbin and /usr/bin), whatever the image sets.
 */
export function renderPodmanLauncher(paths: Partial<LauncherPaths> = {}): string {
  const { banner, failures, authfile } = { ...LAUNCHER_PATHS, ...paths };
  return `#!/bin/bash
# sno-reconfigure-podman: runs the sno-reconfigure agent in its digest-pinned Node image (podman runtime).
# Rendered by \`sno-reconfigure render --runtime podman\` (src/render/podman.ts has the reason for every option).
# Usage: sno-reconfigure-podman COMMAND [ARGS...]
#   run                       the agent's main loop; sno-reconfigure.service runs it, never run it by hand
#   status | plan | prepare | renew-certificates | early-network   act on this node (given --root /host)
#   validate /host/PATH       this node's files are under /host inside the container
# Commands other than run pull the image (authfile ${authfile}) when neither it nor its archive is here.
set -euo pipefail

command="\${1:-run}"
if [ $# -gt 0 ]; then shift; fi

if [ -z "\${${ENV_KEYS.image}:-}" ] && [ -r ${RUNTIME_ENV_PATH} ]; then
  # shellcheck disable=SC1091
  . ${RUNTIME_ENV_PATH}
fi
image="\${${ENV_KEYS.image}:?${ENV_KEYS.image} is not set (${RUNTIME_ENV_PATH})}"
archive="\${${ENV_KEYS.archive}:?${ENV_KEYS.archive} is not set (${RUNTIME_ENV_PATH})}"
bundle="\${${ENV_KEYS.bundle}:?${ENV_KEYS.bundle} is not set (${RUNTIME_ENV_PATH})}"

say() { echo "sno-reconfigure-podman: $*" >&2; }

# What the technician sees on the console when the agent cannot even start: the agent's own banner format.
console_banner() {
  local rule tmp line
  rule="$(printf '=%.0s' {1..72})"
  tmp="${banner}.launcher"
  mkdir -p "\${tmp%/*}" || return 0
  {
    echo "$rule"
    echo " sno-reconfigure: ACTION NEEDED — $1"
    shift
    for line in "$@"; do echo "   $line"; done
    echo " ($(date -u +%Y-%m-%dT%H:%M:%SZ))  details: journalctl -u sno-reconfigure"
    echo "$rule"
  } > "$tmp" && mv -f "$tmp" "${banner}" || return 0
  agetty --reload > /dev/null 2>&1 || true
}

# Waits longer after each failed start of \`run\` since boot: 30 s, 1 min, 2 min ... 16 min.
back_off() {
  local failures=0 delay
  if [ -r ${failures} ]; then failures="$(cat ${failures})"; fi
  case "$failures" in ""|*[!0-9]*) failures=0 ;; esac
  failures=$((failures + 1))
  if mkdir -p "$(dirname ${failures})"; then echo "$failures" > ${failures}; fi
  delay=$(( 30 << (failures < 6 ? failures - 1 : 5) ))
  say "start $failures failed; the next attempt follows in \${delay} s (plus the unit's RestartSec)"
  systemd-notify --status="the agent's Node image is unusable (start $failures failed); retrying in \${delay} s" > /dev/null 2>&1 || true
  # Stopping the unit sends SIGTERM to this shell only (KillMode=mixed) and, with ExitType=cgroup, waits for the
  # sleep too: end it with the shell.
  sleep "$delay" &
  sleeper=$!
  trap 'kill "$sleeper" 2> /dev/null; exit 143' TERM INT
  wait "$sleeper" || true
  trap - TERM INT
}

# fail HEADLINE [LINE...]: says it on stderr (the journal, at priority err); for \`run\`, also on the console,
# then backs off.
fail() {
  local line priority=""
  if [ -n "\${JOURNAL_STREAM:-}" ]; then priority="<3>"; fi
  for line in "$@"; do echo "\${priority}sno-reconfigure-podman: $line" >&2; done
  if [ "$command" = run ]; then
    console_banner "$@"
    back_off
  fi
  exit 1
}

# The image ID recorded by \`sno-reconfigure prepare\` survives the archive round trip; the digest does not.
ref="$image"
if [ -r "$archive${NODE_IMAGE_ID_SUFFIX}" ]; then
  id="$(tr -d '[:space:]' < "$archive${NODE_IMAGE_ID_SUFFIX}")"
  case "$id" in
    *[!0-9a-f]*|"") say "ignoring $archive${NODE_IMAGE_ID_SUFFIX}: not an image ID" ;;
    *) [ \${#id} -eq 64 ] && ref="$id" ;;
  esac
fi

# load_archive: 0 when the image is in storage afterwards; otherwise \`problem\` says why, in sentences.
problem=""
load_archive() {
  local recorded actual
  if [ ! -r "$archive" ]; then
    problem="the agent's Node image is missing: $image is not in this node's container storage and its archive $archive does not exist"
    return 1
  fi
  if [ -r "$archive${NODE_IMAGE_SHA256_SUFFIX}" ]; then
    recorded="$(tr -d '[:space:]' < "$archive${NODE_IMAGE_SHA256_SUFFIX}")"
    actual="$(sha256sum < "$archive")"
    actual="\${actual%% *}"
    if [ "$recorded" != "$actual" ]; then
      problem="the agent's Node image archive $archive is damaged: its sha256 is $actual, prepare recorded $recorded"
      return 1
    fi
  fi
  say "image $ref is not in local storage; loading $archive"
  if ! podman load -i "$archive" >&2; then
    problem="the agent's Node image archive $archive is damaged: podman load could not read it"
    return 1
  fi
  if ! podman image exists "$ref"; then
    problem="the agent's Node image archive $archive does not contain $ref"
    return 1
  fi
}

if ! podman image exists "$ref" && ! load_archive; then
  if [ "$command" = run ]; then
    fail "$problem" \\
      "The agent cannot start, and nothing on this node has been changed." \\
      "At the factory: run 'sno-reconfigure-podman prepare' (it pulls the image and saves the archive again)." \\
      "At the site: copy an intact archive, with its .id and .sha256 files, from a node prepared with the same image."
  fi
  say "$problem; pulling $image"
  authfile=()
  if [ -r ${authfile} ]; then authfile=(--authfile ${authfile}); fi
  if ! podman pull "\${authfile[@]}" "$image" >&2; then
    fail "cannot pull $image: check the registry and the pull secret in ${authfile}"
  fi
  if ! podman image exists "$ref"; then ref="$image"; fi
fi

if [ "$command" = run ]; then
  rm -f ${failures}
  args=(run --rm --replace --name sno-reconfigure --cgroups=split --log-driver=passthrough)
else
  args=(run --rm --name "sno-reconfigure-$command-$$" -i)
  if [ -t 0 ] && [ -t 1 ]; then args+=(-t); fi
fi
args+=(--pull=never
  --privileged --security-opt label=disable --pid=host --net=host --uts=host
  --sdnotify=ignore --user 0:0
  --env PATH=${HOST_PATH}
  --volume /:/host
  --env SNO_RECONFIGURE_HOST_TOOLS=chroot)
if [ -n "\${NOTIFY_SOCKET:-}" ]; then
  args+=(--env "NOTIFY_SOCKET=$NOTIFY_SOCKET")
  # An abstract socket (@...) has no path to mount; a path socket is mounted where the agent expects it.
  case "$NOTIFY_SOCKET" in /*) args+=(--volume "$NOTIFY_SOCKET:$NOTIFY_SOCKET") ;; esac
fi
for var in WATCHDOG_USEC JOURNAL_STREAM SNO_RECONFIGURE_LOG_LEVEL SNO_RECONFIGURE_LOG_FORMAT; do
  if [ -n "\${!var:-}" ]; then args+=(--env "$var=\${!var}"); fi
done

case "$command" in
  run|plan|status|prepare|renew-certificates|early-network) set -- "$command" --root /host "$@" ;;
  *) set -- "$command" "$@" ;;
esac
exec podman "\${args[@]}" "$ref" node "/host$bundle" "$@"
`;
}
