// The one template for sno-reconfigure.service. Three deliveries render it: the MachineConfig with Node on the
// host, the MachineConfig with the podman runtime, and the RPM (rpm/build-rpm.ts). Every directive carries its
// reason in the unit itself, so whoever reads `systemctl cat sno-reconfigure` on a node sees why.
import { DONE_MARKER, EARLY_NETWORK_UNIT } from '../paths';
import { MC_BUNDLE_PATH, PODMAN_LAUNCHER_PATH, RPM_BUNDLE_PATH, RUNTIME_ENV_PATH } from './layout';
import { KUBELET_HOLD_FILE, RENEW_TIMER, SERVICE_RESTART_SEC } from '../paths';

export type UnitVariant = 'machineconfig' | 'podman' | 'rpm';

export const UNIT_VARIANTS: readonly UnitVariant[] = ['machineconfig', 'podman', 'rpm'];

/** The programs the unit names (checked by `systemd-analyze verify`, which needs them to exist). */
export function unitExecutables(variant: UnitVariant): string[] {
  return variant === 'podman' ? ['/bin/bash', PODMAN_LAUNCHER_PATH] : ['/usr/bin/node'];
}

function execStart(variant: UnitVariant, command = 'run'): string {
  switch (variant) {
    case 'machineconfig':
      return `/usr/bin/node ${MC_BUNDLE_PATH} ${command}`;
    case 'rpm':
      return `/usr/bin/node ${RPM_BUNDLE_PATH} ${command}`;
    case 'podman':
      return `/bin/bash ${PODMAN_LAUNCHER_PATH} ${command}`;
  }
}

export function renderAgentUnit(variant: UnitVariant): string {
  const podman = variant === 'podman';
  const lines = [
    '# sno-reconfigure: applies the edge site\'s configuration to this relocated single-node OpenShift, once.',
    `# Rendered by \`sno-reconfigure render\` (variant: ${variant}); edit src/render/unit.ts, not this file.`,
    '[Unit]',
    'Description=Reconfigure this single-node OpenShift for its edge site',
    '# Once a run has finished, the done marker exists and the unit never starts again, even when re-enabled.',
    `ConditionPathExists=!${DONE_MARKER}`,
    '# The site network is applied with nmstatectl, which asks NetworkManager over D-Bus.',
    'Wants=NetworkManager.service',
    'After=NetworkManager.service',
    '# br-ex must exist before the site network is applied. ovs-configuration (configure-ovs.sh) creates it and is',
    '# normally pulled in through kubelet-dependencies.target, which nothing starts while kubelet is held.',
    'Wants=ovs-configuration.service',
    'After=ovs-configuration.service',
    '# update-ca-trust must not run concurrently (openshift-kni/lifecycle-agent 95c0672).',
    'After=coreos-update-ca-trust.service',
    ...(podman
      ? [
          '# The image lives in containers-storage, which crio-wipe may wipe after an unclean shutdown: let it run',
          '# first, then the launcher reloads the image from its archive if needed (like machine-config-daemon-pull).',
          'Wants=crio-wipe.service',
          'After=crio-wipe.service',
        ]
      : []),
    '# Deliberately absent: Before=kubelet.service (the agent itself starts kubelet while this unit runs;',
    '# ordering kubelet after us could only delay that start) and network-online.target (bringing the site',
    '# network up is this unit\'s job, it cannot wait for it).',
    '# Retries: RestartSec= paces them at 30 s, so 30 min hold at most 60 starts and the burst of 100 is never',
    '# reached by automatic restarts: the unit keeps retrying until the run succeeds. The limit only stops a',
    '# tight loop (a drop-in shortening RestartSec=, a script restarting the unit).',
    ...(podman ? ['# When the Node image is unusable the launcher waits longer after each failed start (up to 16 min).'] : []),
    'StartLimitIntervalSec=30min',
    'StartLimitBurst=100',
    '',
    '[Service]',
    '# The agent reports READY=1, STATUS=, WATCHDOG=1 and EXTEND_TIMEOUT_USEC= through the host\'s systemd-notify',
    '# (a child process; in the podman runtime a process inside the container), hence NotifyAccess=all.',
    'Type=notify',
    'NotifyAccess=all',
    ...(podman
      ? [
          `EnvironmentFile=${RUNTIME_ENV_PATH}`,
          '# bash (bin_t) reads the launcher instead of systemd executing it: files the MCD writes can carry the wrong',
          '# SELinux label, and systemd is then denied executing them, 203/EXEC (machine-config-operator#4287,',
          '# OCPBUGS-31376: MCO restores the label of /usr/local/bin/kubenswrapper for the same reason).',
        ]
      : []),
    `ExecStart=${execStart(variant)}`,
    '# The main loop pings every WatchdogSec/2 only while it makes progress; a hung agent is killed and restarted.',
    'WatchdogSec=60s',
    '# READY=1 comes when the runner starts; before each long wait the agent asks for more time with',
    '# EXTEND_TIMEOUT_USEC=. The start-up itself (including `podman load` of the image archive) must fit in here.',
    'TimeoutStartSec=1h',
    'Restart=on-failure',
    `RestartSec=${SERVICE_RESTART_SEC}s`,
    '# SIGTERM to the agent only, so it can finish or roll back the step in progress (nmstatectl may be mid-apply);',
    '# whatever is left gets SIGKILL after TimeoutStopSec.',
    'KillMode=mixed',
    'TimeoutStopSec=90s',
    'SyslogIdentifier=sno-reconfigure',
    ...(podman
      ? [
          '# podman --cgroups=split puts conmon and the container into sub-cgroups of this unit, which needs the',
          '# cgroup delegated (as Quadlet does: containers/podman pkg/systemd/quadlet).',
          'Delegate=yes',
          '# The unit ends when its cgroup is empty, not when podman exits: with podman >= 5.3 "systemd kills the',
          '# conmon process before it has a chance to cleanup" (openshift-kni/lifecycle-agent main,',
          '# controllers/seedgen_controller.go, which runs its podman unit with ExitType=cgroup). systemd >= 250.',
          'ExitType=cgroup',
        ]
      : []),
    '',
    '# Hardening. This is a root agent that must run systemctl, nmstatectl, mount, agetty --reload and podman;',
    '# what it keeps and what it cannot use, and why:',
    '# - Kept: no personality changes, no realtime scheduling, native syscalls only, and only the socket',
    '#   families it uses (unix: D-Bus, systemd-notify, ovsdb; inet/inet6: kube-apiserver, connectivity checks;',
    '#   netlink: nmstatectl\'s state queries). With CAP_SYS_ADMIN these do not imply NoNewPrivileges.',
    'LockPersonality=yes',
    'RestrictRealtime=yes',
    'SystemCallArchitectures=native',
    'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK',
    '# - A runaway agent must not starve kubelet, etcd and the API server it waits for (it needs ~50-80 MB).',
    'MemoryMax=1G',
    ...(podman
      ? [
          '# - Not in the podman runtime: mount-namespace options (ProtectKernel*=, ProtectControlGroups=,',
          '#   PrivateTmp=, ProtectHome=) would put container storage mounts into a namespace CRI-O and later',
          '#   podman calls cannot see, and --cgroups=split must write to /sys/fs/cgroup. UMask= would reach',
          '#   `podman load`.',
        ]
      : [
          '# - Kernel tunables, modules, logs and cgroups are read-only or off: the agent only reads /sys (DMI ids);',
          '#   NetworkManager, not the agent, changes the network. These give the unit its own mount namespace:',
          '#   media the agent mounts there stay invisible to the host and vanish with it (it copies, then unmounts).',
          'ProtectKernelTunables=yes',
          'ProtectKernelModules=yes',
          'ProtectKernelLogs=yes',
          'ProtectControlGroups=yes',
          '# - Copies of the pull secret and keys never land in the shared /tmp; new files default to owner-only;',
          '#   home directories are none of its business.',
          'PrivateTmp=yes',
          'ProtectHome=yes',
          'UMask=0077',
        ]),
    '# - Not used: ProtectSystem= (it writes /etc and /var); PrivateDevices= and ProtectClock= (a private /dev or',
    '#   a device allow-list would hide the site-config medium it mounts); NoNewPrivileges= (blocks SELinux domain',
    '#   transitions of the tools it runs, e.g. podman); MemoryDenyWriteExecute= (V8 compiles JavaScript to',
    '#   executable memory); CapabilityBoundingSet=, SystemCallFilter=, RestrictNamespaces= and',
    '#   RestrictSUIDSGID= (mount, chroot and podman need all of them).',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ];
  return lines.join('\n');
}

/**
 * Drop-in for kubelet.service: kubelet stays down while the hold file exists (see KUBELET_HOLD_FILE). A failed
 * condition is not a failure: units that want kubelet carry on, and Restart=always does not loop.
 */
export function renderKubeletHoldDropin(): string {
  return [
    '# sno-reconfigure: kubelet waits until the site configuration has been applied.',
    '# `sno-reconfigure prepare` creates the hold file at the factory; the agent removes it and starts kubelet.',
    '# To start kubelet by hand: rm ' + KUBELET_HOLD_FILE + ' && systemctl start kubelet',
    '[Unit]',
    `ConditionPathExists=!${KUBELET_HOLD_FILE}`,
    '',
  ].join('\n');
}

export { EARLY_NETWORK_UNIT };

/**
 * The early network phase (src/network/early.ts): at boot, while the NIC's own profile is the active one. Ordered
 * as lifecycle-agent orders its ip-configuration.service (openshift-kni/lifecycle-agent 0e1bf18,
 * lca-cli/ipconfig: after NetworkManager, before the units that read the node's address), and before
 * nodeip-configuration.service (baremetal-runtimecfg `node-ip set`: picks the node IP from the addresses present)
 * and ovs-configuration.service (configure-ovs clones the NIC's profile into br-ex), both from
 * machine-config-operator templates/common/_base/units (release-4.14 … 4.16).
 */
export function renderEarlyNetworkUnit(variant: UnitVariant): string {
  const podman = variant === 'podman';
  return [
    "# sno-reconfigure: the site network, applied at boot before configure-ovs builds br-ex (or the known good brought back).",
    `# Rendered by \`sno-reconfigure render\` (variant: ${variant}); edit src/render/unit.ts, not this file.`,
    '[Unit]',
    'Description=Apply the edge site network before configure-ovs (sno-reconfigure)',
    `ConditionPathExists=!${DONE_MARKER}`,
    '# nmstatectl asks NetworkManager over D-Bus; NetworkManager has activated the NIC\'s own profile by then.',
    'Wants=NetworkManager.service',
    'After=NetworkManager.service',
    ...(podman ? ['# The image lives in containers-storage: crio-wipe first (as for the agent).', 'Wants=crio-wipe.service', 'After=crio-wipe.service'] : []),
    '# Before configure-ovs clones the NIC profile into br-ex and before nodeip-configuration picks the node IP.',
    'Before=nodeip-configuration.service ovs-configuration.service kubelet-dependencies.target',
    `Before=${'sno-reconfigure.service'}`,
    '',
    '[Service]',
    'Type=oneshot',
    ...(podman ? [`EnvironmentFile=${RUNTIME_ENV_PATH}`] : []),
    `ExecStart=${execStart(variant, 'early-network')}`,
    '# Bounded: a checkpoint of at most 3 minutes, its verification and a restore fit well inside; past it the boot',
    '# carries on and the next boot restores what is journaled.',
    'TimeoutStartSec=10min',
    'SyslogIdentifier=sno-reconfigure-network',
    ...(podman ? ['Delegate=yes'] : []),
    '',
    '[Install]',
    '# Pulled in with the units it must precede.',
    'WantedBy=network-online.target',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

/** The certificate renewal units: shipped disabled; the run enables the timer when the site-config asks for it. */
export const RENEW_SERVICE = 'sno-reconfigure-renew.service';
export { RENEW_TIMER };

export function renderRenewService(variant: UnitVariant): string {
  return [
    '# sno-reconfigure: renews the certificates the agent issued for the new API and apps names.',
    `# Rendered by \`sno-reconfigure render\` (variant: ${variant}); edit src/render/unit.ts, not this file.`,
    '[Unit]',
    'Description=Renew the certificates sno-reconfigure issued for this single-node OpenShift',
    '# Started by its timer only after a finished run (the done marker); before that there is nothing to renew.',
    `ConditionPathExists=${DONE_MARKER}`,
    'Wants=network-online.target',
    'After=network-online.target kubelet.service',
    '',
    '[Service]',
    'Type=oneshot',
    '# It renews only what has used 80 % of its lifetime, so a daily start is cheap and idempotent.',
    `ExecStart=${execStart(variant, 'renew-certificates')}`,
    '# A renewal waits for the kube-apiserver and router rollouts it starts.',
    'TimeoutStartSec=90min',
    '',
  ].join('\n');
}

export function renderRenewTimer(): string {
  return [
    '# sno-reconfigure: daily look at the issued certificates (enabled by the run when spec.certificateRenewal is timer).',
    '[Unit]',
    'Description=Renew the certificates sno-reconfigure issued, when due',
    '',
    '[Timer]',
    'OnCalendar=daily',
    '# Spread the API restarts of a fleet over the night; catch up after the node was off.',
    'RandomizedDelaySec=4h',
    'Persistent=true',
    '',
    '[Install]',
    'WantedBy=timers.target',
    '',
  ].join('\n');
}
