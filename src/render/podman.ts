// The podman runtime (DESIGN.md section 2): RHCOS ships no Node.js, so the agent runs in a digest-pinned Node
// image with the host mounted at /host. These are the launcher script the unit runs and its settings file.
import { MC_BUNDLE_PATH, NODE_IMAGE_ARCHIVE_PATH, NODE_IMAGE_ID_SUFFIX, RUNTIME_ENV_PATH } from './layout';

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
        'registry.access.redhat.com/ubi9/nodejs-20-minimal@sha256:…; find the digest with ' +
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

/**
 * The launcher. Settings come from the environment (runtime.env through the unit), so one script serves every
 * image. Why each step and podman option:
 * - The image is run by the ID `prepare` recorded next to the archive: unlike NAME@sha256:DIGEST it still
 *   resolves after a save/load round trip (see NODE_IMAGE_ARCHIVE_PATH). Without that record (prepare not run),
 *   the digest reference, which resolves as long as the pulled image is in storage.
 * - `image exists || load -i`: kubelet image GC and crio-wipe can remove an unused image; the archive stays.
 * - `--pull=never`: the site may have no registry access; a missing image is an error, not a download attempt.
 * - `--privileged --security-opt label=disable --pid=host --net=host --uts=host -v /:/host`: the agent drives the
 *   host (systemctl, nmstatectl, mount) through `chroot /host`, sees host PIDs (systemd-notify's credentials)
 *   and the host's hostname and network.
 * - `--cgroups=split` + the unit's Delegate=yes: conmon and the container stay inside the unit's cgroup, so
 *   NotifyAccess=all accepts their messages and stopping the unit stops them.
 * - `--sdnotify=ignore`: podman neither proxies the socket nor sends MAINPID/READY of its own; the agent reports
 *   READY, STATUS, WATCHDOG itself through the host's systemd-notify (`chroot /host`: ubi-minimal has none,
 *   runtime-libs.md section 2). Podman then drops NOTIFY_SOCKET from its own environment, so the value is
 *   passed explicitly (containers/podman libpod/oci_conmon_linux.go startCommand).
 * - WATCHDOG_PID is not passed: it names the launcher's PID, and the agent would conclude the pings are not its own.
 * - `--log-driver=passthrough` + JOURNAL_STREAM: the container writes straight into the unit's journal stream, so
 *   the agent's `<N>` priority prefixes reach journald (src/log.ts).
 * - `--user 0:0`: the ubi Node images default to uid 1001.
 * - `--replace --name`: a container left over from a power cut does not block the next start.
 */
export function renderPodmanLauncher(): string {
  return `#!/bin/bash
# sno-reconfigure-podman: runs the sno-reconfigure agent in its digest-pinned Node image (podman runtime).
# Rendered by \`sno-reconfigure render --runtime podman\` (src/render/podman.ts has the reason for every option).
# Usage: sno-reconfigure-podman COMMAND [ARGS...]   (\`run\` gets --root /host)
set -euo pipefail

if [ -z "\${${ENV_KEYS.image}:-}" ] && [ -r ${RUNTIME_ENV_PATH} ]; then
  # shellcheck disable=SC1091
  . ${RUNTIME_ENV_PATH}
fi
image="\${${ENV_KEYS.image}:?${ENV_KEYS.image} is not set (${RUNTIME_ENV_PATH})}"
archive="\${${ENV_KEYS.archive}:?${ENV_KEYS.archive} is not set (${RUNTIME_ENV_PATH})}"
bundle="\${${ENV_KEYS.bundle}:?${ENV_KEYS.bundle} is not set (${RUNTIME_ENV_PATH})}"

# The image ID recorded by \`sno-reconfigure prepare\` survives the archive round trip; the digest does not.
ref="$image"
if [ -r "$archive${NODE_IMAGE_ID_SUFFIX}" ]; then
  id="$(tr -d '[:space:]' < "$archive${NODE_IMAGE_ID_SUFFIX}")"
  case "$id" in
    *[!0-9a-f]*|"") echo "sno-reconfigure-podman: ignoring $archive${NODE_IMAGE_ID_SUFFIX}: not an image ID" >&2 ;;
    *) [ \${#id} -eq 64 ] && ref="$id" ;;
  esac
fi

if ! podman image exists "$ref"; then
  if [ ! -r "$archive" ]; then
    echo "sno-reconfigure-podman: image $image ($ref) is not in local storage and its archive $archive is missing;" >&2
    echo "sno-reconfigure-podman: at the factory, run 'sno-reconfigure prepare' (it pulls and saves the image)" >&2
    exit 1
  fi
  echo "sno-reconfigure-podman: image $ref not in local storage; loading $archive" >&2
  podman load -i "$archive" >&2
  if ! podman image exists "$ref"; then
    echo "sno-reconfigure-podman: $archive does not contain $ref; re-run 'sno-reconfigure prepare' at the factory" >&2
    exit 1
  fi
fi

args=(run --rm --replace --name sno-reconfigure --pull=never
  --privileged --security-opt label=disable --pid=host --net=host --uts=host
  --cgroups=split --sdnotify=ignore --log-driver=passthrough --user 0:0
  --volume /:/host
  --env SNO_RECONFIGURE_HOST_TOOLS=chroot)
if [ -n "\${NOTIFY_SOCKET:-}" ]; then
  args+=(--env "NOTIFY_SOCKET=$NOTIFY_SOCKET")
  # An abstract socket (@...) has no path to mount; a path socket is mounted where the agent expects it.
  case "$NOTIFY_SOCKET" in /*) args+=(--volume "$NOTIFY_SOCKET:$NOTIFY_SOCKET") ;; esac
fi
for var in WATCHDOG_USEC JOURNAL_STREAM SNO_RECONFIGURE_LOG_LEVEL; do
  if [ -n "\${!var:-}" ]; then args+=(--env "$var=\${!var}"); fi
done

command="\${1:-run}"
if [ $# -gt 0 ]; then shift; fi
if [ "$command" = run ]; then
  set -- run --root /host "$@"
else
  set -- "$command" "$@"
fi
exec podman "\${args[@]}" "$ref" node "/host$bundle" "$@"
`;
}
