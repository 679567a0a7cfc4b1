// Where things live on the node. All are node paths, resolved under the host root by the Host.
/** The daily certificate renewal (src/render/unit.ts renders it; the finish step enables it on request). */
export const RENEW_TIMER = 'sno-reconfigure-renew.timer';
export const UNIT_NAME = 'sno-reconfigure.service';
/** The early network phase at boot (src/network/early.ts), rendered into the MachineConfig beside the agent's unit. */
export const EARLY_NETWORK_UNIT = 'sno-reconfigure-network.service';
/** Where Ignition writes it: the network step takes the early path when the node has it. */
export const EARLY_NETWORK_UNIT_PATH = `/etc/systemd/system/${EARLY_NETWORK_UNIT}`;
/** A random UUID the kernel makes at each boot (proc(5), /proc/sys/kernel/random/boot_id). */
export const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id';
/** The unit's RestartSec=: how long after a failed run systemd starts the next (the banner says when). */
export const SERVICE_RESTART_SEC = 30;
export const KUBELET_UNIT = 'kubelet.service';
/**
 * While this file exists kubelet does not start (ConditionPathExists=! in the drop-in below). `prepare`
 * creates it at the factory; the agent's kubelet step removes it before it starts kubelet.
 * Why not `systemctl mask kubelet.service`: on RHCOS kubelet.service is a regular file in /etc/systemd/system
 * (the MCO writes it there) and systemctl refuses to mask over a file ("Failed to mask unit, file ... already
 * exists", measured with systemd 252). Masking from the MachineConfig instead would stop kubelet at the
 * factory on the MC's own reboot, and the MCD then reports the unmasked unit as on-disk drift
 * (machine-config-operator pkg/daemon: checkV3Unit expects a masked unit to link to /dev/null).
 */
export const KUBELET_HOLD_FILE = '/etc/sno-reconfigure/kubelet-hold';
export const DEFAULT_STATE_DIR = '/var/lib/sno-reconfigure';
export const DEFAULT_DROP_DIR = '/etc/sno-reconfigure/site-config.d';
export const TRUSTED_KEYS_DIR = '/etc/sno-reconfigure/trusted-keys';
/**
 * Written by the MachineConfig when the factory rendered it with `--allow-unsigned-media` (DESIGN.md section 3):
 * the record that unsigned site-config media were chosen, not merely left so. Trusted keys, when present, win.
 */
export const UNSIGNED_MEDIA_FILE = '/etc/sno-reconfigure/allow-unsigned-media';
/**
 * This node's own X25519 key for sealed site-config files (src/siteconfig/sealed.ts), made by `prepare`: in /etc,
 * which the node keeps for its life and the MCO leaves alone (no MachineConfig names it), 0600 root.
 */
export const NODE_KEY_FILE = '/etc/sno-reconfigure/node-key.pem';
export const NODE_PUBLIC_KEY_FILE = '/etc/sno-reconfigure/node-key.pub.pem';
/** The unit's `ConditionPathExists=!` checks this: once it exists the service never starts again. */
export const DONE_MARKER = '/etc/sno-reconfigure/done';
/** agetty shows every *.issue file here on the console (agetty(8), "ISSUE FILES"). */
export const BANNER_PATH = '/etc/issue.d/50-sno-reconfigure.issue';
/**
 * The node-local admin kubeconfig an SNO keeps for itself (kube-apiserver-operator writes it; it talks to
 * localhost:6443, so it works whatever the domain; reference/anchor-installer.md). localhost-recovery, not
 * localhost: the same node-system-admin-client certificate, but it verifies the server as
 * `localhost-recovery`, whose serving certificate lasts 10 years, where `localhost`'s lasts 30 days and has
 * expired after a month in storage (cluster-kube-apiserver-operator
 * pkg/operator/certrotationcontroller/certrotationcontroller.go, bindata/assets/kube-apiserver/node-kubeconfigs.yaml).
 */
export const DEFAULT_KUBECONFIG = '/etc/kubernetes/static-pod-resources/kube-apiserver-certs/secrets/node-kubeconfigs/localhost-recovery.kubeconfig';
/**
 * The kube-apiserver's revisions on the node; each holds the localhost-recovery-client service-account token
 * its cert-regeneration controller uses (bindata/assets/kube-apiserver/kubeconfig-cm.yaml, tokenFile):
 * <dir>/kube-apiserver-pod-<revision>/secrets/localhost-recovery-client-token/token.
 */
export const STATIC_POD_RESOURCES_DIR = '/etc/kubernetes/static-pod-resources';
/**
 * A long-lived admin kubeconfig the factory hands over (`prepare --admin-kubeconfig`, mode 0600): preferred
 * for the site's hand-off kubeconfig over the node-local one, whose client certificate rotates.
 */
export const FACTORY_ADMIN_KUBECONFIG = '/etc/sno-reconfigure/admin-kubeconfig';
/** This node's row of the fleet inventory (src/factory/inventory-row.ts), written by `prepare` for `media build --nodes`. */
export const INVENTORY_ROW_FILE = '/etc/sno-reconfigure/inventory-row.yaml';
/** Factory baseline written by `prepare`. */
export const BASELINE_FILE = '/etc/sno-reconfigure/baseline.json';
/** Where `run` keeps its files, relative to the state directory. */
export const STATE_FILES = {
  journal: 'journal.json',
  report: 'report.json',
  siteConfigCopy: 'site-config',
  backups: 'backups',
  kubeconfig: 'kubeconfig-new-api',
  /** metadata.issued of the last signed config taken (src/engine/last-issued.ts); `prepare` keeps it. */
  lastIssued: 'last-issued.json',
  /** What the agent saw renamed into the drop directory (src/engine/detect.ts), kept for its next start and boot. */
  dropDirRenames: 'drop-dir-renames.json',
  /** core's SSH keys as the factory left them (src/steps/ssh-key.ts): kept for good, by prepare too. */
  sshKeysFactory: 'ssh-keys-factory.json',
  /** kube-system/kubeadmin's data as the factory left it (src/steps/kubeadmin.ts): kept for good, by prepare too. */
  kubeadminFactory: 'kubeadmin-factory.json',
  /** The master pool's MachineConfigs as the factory left them (src/factory/machineconfigs.ts): kept for good. */
  machineConfigsFactory: 'machineconfigs-factory.json',
} as const;
export const DEFAULT_LABELS = ['site-config', 'cluster-config', 'relocation-config'];
/**
 * kubelet's --bootstrap-kubeconfig on RHCOS (machine-config-operator templates: kubelet.service). Its server is
 * Infrastructure status.apiServerInternalURL, https://api-int.<cluster>.<installed domain>:6443
 * (machine-config-operator pkg/operator/sync.go), the name kubelet resolves to reach the API.
 */
export const KUBELET_BOOTSTRAP_KUBECONFIG = '/etc/kubernetes/kubeconfig';
