// Each command's one-line summary, for `sno-reconfigure --help`: the command table (./index.ts) lists them without
// loading the commands, which load when one is run (issue 39: `--version` and `--help` start like a bare node).
export const RUN_SUMMARY = "the service's main loop: wait for the site-config, then reconfigure this node";
export const VALIDATE_SUMMARY = 'validate a site-config file, directory or volume offline';
export const PLAN_SUMMARY = 'what run would change on this node and cluster, step by step, without changing anything';
export const STATUS_SUMMARY = 'the current or last run: phase, steps, last error, report';
export const RENEW_SUMMARY = 'renew the certificates the agent issued for the new API and apps names';
export const PREPARE_SUMMARY = 'factory: preflight checks, hold kubelet, enable the service, record the baseline';
export const EARLY_NETWORK_SUMMARY = 'at boot, before configure-ovs: apply the site network under a checkpoint, or restore the known good';
export const MEDIA_SUMMARY = 'media build (a workstation: images for an inventory of sites) and media check (what a stick or image holds)';
// render and seal run on a workstation: the node bundle hands them to the workstation bundle (./workstation.ts).
export const RENDER_SUMMARY = 'print the factory MachineConfig that installs this agent';
export const SEAL_SUMMARY = "workstation: encrypt site-config files to one node's key (X becomes X.sealed)";
