// Where the delivery puts things on the node: the bundle, the units, the launcher, the node-IP files.
// Agent-wide paths (state dir, done marker, trusted keys) live in src/paths.ts.
import { DEFAULT_STATE_DIR } from '../paths';

/**
 * What units and launchers run when the MachineConfig installed the agent: the loader of MC_PAYLOAD_PATH.
 * RHCOS mounts /usr read-only; /usr/local is a symlink to /var/usrlocal, which the MCO writes like /etc and
 * /var (openshift-docs PR #33523: "/usr/local is a link to a directory that is supported by the MCO for adding
 * files"; MCO itself ships /usr/local/bin/configure-ovs.sh).
 */
export const MC_BUNDLE_PATH = '/usr/local/libexec/sno-reconfigure/sno-reconfigure.cjs';
/**
 * The bundle itself, brotli-compressed, beside MC_BUNDLE_PATH (src/render/payload.ts says why).
 */
export const MC_PAYLOAD_PATH = `${MC_BUNDLE_PATH}.br`;
/** The bundle as installed by the RPM (%{_libexecdir}/sno-reconfigure/). */
export const RPM_BUNDLE_PATH = '/usr/libexec/sno-reconfigure/sno-reconfigure.cjs';
/** `sno-reconfigure status` on a node with the host runtime: a wrapper, because the MCO refuses links. */
export const MC_WRAPPER_PATH = '/usr/local/bin/sno-reconfigure';
/** Runs the agent in the digest-pinned Node image (DESIGN.md section 2, `podman` runtime). */
export const PODMAN_LAUNCHER_PATH = '/usr/local/bin/sno-reconfigure-podman';
/** KEY=value settings of the podman runtime, read by the unit (EnvironmentFile=), the launcher and `prepare`. */
export const RUNTIME_ENV_PATH = '/etc/sno-reconfigure/runtime.env';
/**
 * The Node image saved at the factory by `prepare` (`podman save --format docker-archive`): kubelet's image GC
 * and crio-wipe can delete an unused image from the shared containers-storage (runtime-libs.md section 6); the
 * archive survives both. A save/load round trip re-serializes the manifest, so the digest of NAME@sha256:…
 * no longer resolves afterwards (measured with podman 4.3: oci-archive refuses to load at all, "Digest of
 * source image's manifest would not match destination reference"; docker-archive and docker-dir load under a
 * new digest). The image ID (the config digest, which pins every layer's content) survives: `prepare` records
 * it next to the archive (NODE_IMAGE_ID_SUFFIX) and the launcher runs the image by that ID.
 */
export const NODE_IMAGE_ARCHIVE_PATH = `${DEFAULT_STATE_DIR}/node-image.docker-archive.tar`;
/** `<archive>.id` holds the image ID (64 hex digits) recorded by `prepare`. */
export const NODE_IMAGE_ID_SUFFIX = '.id';
/** `prepare` writes the archive's sha256 (64 hex digits) beside it, the launcher checks it before `podman load`. */
export const NODE_IMAGE_SHA256_SUFFIX = '.sha256';
/** Failed launches of `run` since boot (the launcher's backoff counter; /run is empty after a reboot). */
export const LAUNCHER_FAILURES_PATH = '/run/sno-reconfigure/launcher-failures';
/** The kubelet's pull secret: what the MCO's own pulls use (machine-config-daemon-pull.service, runtime-libs.md section 6). */
export const PULL_AUTHFILE = '/var/lib/kubelet/config.json';

export const KUBELET_HOLD_DROPIN = '10-sno-reconfigure-hold.conf';

/**
 * baremetal-runtimecfg's `node-ip set` (nodeip-configuration.service, enabled on platform None, i.e. SNO)
 * reads KUBELET_NODEIP_HINT from this file and picks the host address in the hint's subnet for kubelet
 * (KUBELET_NODE_IP) and CRI-O (CONTAINER_STREAM_ADDRESS). machine-config-operator
 * templates/common/_base/units/nodeip-configuration.service.yaml: EnvironmentFile=-/etc/default/nodeip-configuration;
 * baremetal-runtimecfg cmd/runtimecfg/node-ip.go: the hint arguments select the address routing to them.
 */
export const NODEIP_HINT_PATH = '/etc/default/nodeip-configuration';
/**
 * NetworkManager runs scripts in dispatcher.d for every action except pre-up, which runs pre-up.d and waits
 * for them before it reports the device activated (NetworkManager-dispatcher(8)). The same script goes to
 * both: the MCO refuses Ignition links, so no symlink.
 */
export const DISPATCHER_NAME = '30-sno-reconfigure-internal-ip';
export const DISPATCHER_PATHS = [`/etc/NetworkManager/dispatcher.d/${DISPATCHER_NAME}`, `/etc/NetworkManager/dispatcher.d/pre-up.d/${DISPATCHER_NAME}`] as const;
/** ovs-configuration (configure-ovs.sh) creates this bridge and moves the node's address onto it. */
export const BR_EX = 'br-ex';
/** Drop-in name when kubelet/CRI-O are pinned directly instead of through the hint (after 20-nodenet.conf). */
export const NODEIP_DROPIN = '30-sno-reconfigure-nodeip.conf';
