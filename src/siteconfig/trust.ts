// The media trust rule (DESIGN.md section 4, "Trust model"), in the one place `validate`, `plan` and `run` all
// pass through (src/siteconfig/validation/trust-decision.ts calls it right after the schema): what unsigned media may carry.
//
// Unsigned means limited. A node whose factory chose `--allow-unsigned-media` takes from a stick anyone can
// plug in only what *moves* the node: its network, its names, the pull secret and digest mirrors it pulls with,
// its time sources, and the agent's own deadlines. Everything that *adds a way in* needs signed media. This is an
// allowlist of fields, not a list of dangerous objects (issue 36: a list of dangerous Kubernetes objects was
// never complete — a workload under a privileged service account, an aggregating ClusterRole, an OLM
// subscription all passed it). A field not listed here, including any field added to the schema later, is
// refused from unsigned media until someone decides otherwise and writes the reason below and in
// docs/site-config.md ("What unsigned media can and cannot do").
//
// Allowed, and why each cannot add a way in:
// - metadata (name; issued/expires carry no weight without a signature), spec.match (only narrows which machine).
// - clusterName, hostname: must equal the installed ones (checked against the cluster); baseDomain: new names only.
// - network: the uplink's addresses, routes, DNS, verified before commit and rolled back otherwise; within its
//   nmstate state only the uplink itself (src/siteconfig/nmstate-unsigned.ts, judged once the state is read).
// - pullSecret (+ pullSecretMode): credentials the node presents to registries; a bad one only fails pulls.
// - imageDigestMirrors: images pulled by digest are checked against the digest whatever mirror serves them.
// - ntp: where chronyd takes the time from; timeouts: the agent's own deadlines (at most 24h each).
// - sha256: pins only constrain the referenced files.
// - kubeadminPassword.remove: deletes a login, adds none (an image-based manifest.json without a hash means it).
//   Not ssh.factoryKeys: the schema takes it only beside keys, which need the signature, so spec.ssh is signed-only.
//
// Signed media only (the reason is the refusal's message):
import { isPlainObject, subPath } from './problems';
import { specSchema } from './schema';
import type { ValidationProblem } from './types';

/** spec fields unsigned media may carry (whole subtrees). */
const UNSIGNED_SPEC = new Set('match clusterName hostname baseDomain network pullSecret pullSecretFile pullSecretMode imageDigestMirrors ntp timeouts sha256'.split(' '));

/** Keys of an otherwise signed-only section that unsigned media may carry. */
const UNSIGNED_KEYS: Record<string, string> = { kubeadminPassword: 'remove' };

/** Why each known field needs signed media: what it would hand to whoever holds the stick. */
const NEEDS_SIGNATURE: Record<string, string> = {
  extraManifestFiles: 'extra manifests are applied to the cluster as its administrator, so any of them can run anything on the node',
  ssh: 'an SSH key logs in as core, which has root through sudo',
  kubeadminPassword: 'the kubeadmin password is a cluster-admin login',
  certificates: 'a certificate and key of its own let whoever made them impersonate the API or the routes',
  certificateRenewal: 'it decides how the serving certificates are renewed',
  additionalTrustBundle: 'a trusted CA lets whoever holds its key stand in for any registry or server the cluster talks to',
  additionalTrustBundleFile: 'a trusted CA lets whoever holds its key stand in for any registry or server the cluster talks to',
  imageTagMirrors: 'a tag mirror may serve any image under a tag (nothing checks its content, unlike a digest)',
  proxy: 'a proxy sees, and with its CA may change, the cluster\'s outbound traffic',
  nodeLabels: 'node labels select which workloads and operator settings land on the node',
};

/** The message when `key` (a spec field) comes from unsigned media. */
export function needsSignedMedia(key: string): string {
  // Own properties only (issue 36, C7): a key named `constructor` read Object's own through the prototype.
  const why = (Object.hasOwn(NEEDS_SIGNATURE, key) ? NEEDS_SIGNATURE[key] : undefined) ?? 'it is not one of the fields unsigned media may carry (network, names, pull secret, digest mirrors, NTP, timeouts)';
  return `needs signed media: ${why}. This node takes from unsigned media only the network, names, pull secret, digest mirrors, NTP and timeouts; the office must send signed media, or media without this field`;
}

/**
 * The fields of a site-config document that unsigned media may not carry, one problem each: a section's own
 * keys are named (spec.ssh.authorizedKeys, spec.kubeadminPassword.hash), so the refusal names what was given.
 */
export function unsignedProblems(document: unknown): ValidationProblem[] {
  const spec = isPlainObject(document) ? document.spec : undefined;
  if (!isPlainObject(spec)) return [];
  const problems: ValidationProblem[] = [];
  for (const [key, value] of Object.entries(spec)) {
    // A field the schema does not know is an error of its own already ("unknown field").
    if (UNSIGNED_SPEC.has(key) || !Object.hasOwn(specSchema.shape, key)) continue;
    const at = subPath('spec', key);
    const keys = isPlainObject(value) ? Object.keys(value).filter((k) => !Object.hasOwn(UNSIGNED_KEYS, key) || UNSIGNED_KEYS[key] !== k) : [];
    if (isPlainObject(value) && keys.length === 0 && Object.hasOwn(UNSIGNED_KEYS, key)) continue;
    const inner = keys.length > 0 ? keys.map((k) => subPath(at, k)) : [at];
    for (const path of inner) problems.push({ path, message: needsSignedMedia(key) });
  }
  return problems;
}

/** Milliseconds of a timestamp the schema accepted, or undefined. */
const timeOf = (v: unknown): number | undefined => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? Date.parse(v) : undefined);

/**
 * A signed config issued at the very moment of the one this node applied last, yet another config (its digest, over
 * the file and every file it names): one of the two is not the newest, and which cannot be told, so it is not applied
 * (the fourth hostile re-test of issue 36: a correction signed with the same date let the config it corrected be
 * replayed after it). The config applied last again (a restart resuming it) has the same digest and is taken — until
 * `prepare` re-armed the node for its next relocation: then the same media are last relocation's, replayed (the tenth
 * hostile re-test).
 */
export function sameIssueProblem(issued: string | undefined, digest: string, last: { issued: string; digest?: string; finished?: true } | undefined): ValidationProblem | undefined {
  if (issued === undefined || last === undefined || timeOf(issued) !== timeOf(last.issued)) return undefined;
  if (last.finished) return { path: 'metadata.issued', message: `${issued} is when the config this node applied last was issued, and that relocation is finished: media are never applied twice (the office must issue new media with a later metadata.issued)` };
  if (last.digest === undefined || digest === last.digest) return undefined;
  return { path: 'metadata.issued', message: `${issued} is also when the config this node applied last was issued, but this is another config: media issued at one moment are one config, so one of the two is not the newest (the office must issue the corrected config with a later metadata.issued)` };
}

const ISSUED_AHEAD_MS = 24 * 3600_000;

/**
 * Signed means bound: a signed site-config names its machine (spec.match) and when it was issued
 * (metadata.issued); it is refused once expired (metadata.expires, by this machine's clock), when it was issued
 * before `lastIssued`, the config this node applied last (no replay of older signed media), and when it claims to be
 * issued more than a day ahead of this machine's clock.
 */
export function signedProblems(document: unknown, now: Date, lastIssued?: string): ValidationProblem[] {
  const metadata = isPlainObject(document) && isPlainObject(document.metadata) ? document.metadata : {};
  const spec = isPlainObject(document) && isPlainObject(document.spec) ? document.spec : {};
  const problems: ValidationProblem[] = [];
  if (spec.match === undefined) problems.push({ path: 'spec.match', message: 'is required on signed media: name the machine the config is for (systemUUID, serialNumber or macAddress), or the same signed file would be taken by any other node' });
  const issued = timeOf(metadata.issued);
  const expires = timeOf(metadata.expires);
  if (metadata.issued === undefined) problems.push({ path: 'metadata.issued', message: 'is required on signed media: when the config was issued (RFC 3339, like 2026-11-27T09:00:00Z), so that a node never goes back to older media' });
  if (expires !== undefined && issued !== undefined && expires <= issued) problems.push({ path: 'metadata.expires', message: `(${String(metadata.expires)}) is not after metadata.issued (${String(metadata.issued)})` });
  else if (expires !== undefined && expires <= now.getTime()) problems.push({ path: 'metadata.expires', message: `the config expired at ${String(metadata.expires)} (this machine's clock says ${now.toISOString().replace(/\.\d+Z$/, 'Z')}): the office must issue new media` });
  // An issue date far ahead of this machine's clock is a typo the node would keep: every config issued before it would
  // be refused from then on (the tenth hostile re-test of issue 36 locked a node with 2062). A day covers clocks and zones.
  if (issued !== undefined && issued > now.getTime() + ISSUED_AHEAD_MS) problems.push({ path: 'metadata.issued', message: `${String(metadata.issued)} is more than a day after this machine's clock (${now.toISOString().replace(/\.\d+Z$/, 'Z')}): a node never takes media issued before the last it took, so a wrong date would lock it; the office must correct the date (or, if this machine's clock is wrong, set it)` });
  const last = timeOf(lastIssued);
  if (issued !== undefined && last !== undefined && issued < last) problems.push({ path: 'metadata.issued', message: `${String(metadata.issued)} is before ${lastIssued}, when the config this node applied last was issued: older media are never applied again (the office must issue new media)` });
  return problems;
}
