// "did you mean" for unknown field names: the nearest known name by optimal-string-alignment distance
// (Levenshtein plus adjacent transpositions, so 'baseDomian' → 'baseDomain' is one edit).

export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => {
    const row = new Array<number>(cols).fill(0);
    row[0] = i;
    return row;
  });
  for (let j = 0; j < cols; j++) d[0]![j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * Names people write from other tools' formats or from memory, which no spelling distance reaches:
 * install-config's `pullSecret`/`additionalTrustBundle` are ours too, but `domain`, `mirrors` and the like
 * are not. Only suggested where the meant field is known at that place.
 */
const MEANT: Record<string, string> = {
  domain: 'baseDomain',
  basedomain: 'baseDomain',
  clusterdomain: 'baseDomain',
  mirrors: 'imageDigestMirrors',
  imagecontentsources: 'imageDigestMirrors',
  imagedigestsources: 'imageDigestMirrors',
  registrymirrors: 'imageDigestMirrors',
  tagmirrors: 'imageTagMirrors',
  trustbundle: 'additionalTrustBundle',
  cabundle: 'additionalTrustBundle',
  ca: 'additionalTrustBundle',
  trustbundlefile: 'additionalTrustBundleFile',
  pullsecretpath: 'pullSecretFile',
  nmstateconfig: 'nmstate',
  networkconfig: 'network',
  nodename: 'hostname',
  ping: 'verify',
};

/** The known name closest to `unknown`, or undefined when none is close enough to be a plausible typo. */
export function nearestName(unknown: string, known: readonly string[]): string | undefined {
  // No real typo is this long; skipping it keeps a hostile file's huge keys from costing quadratic time.
  if (unknown.length > 64) return undefined;
  const meant = MEANT[unknown.toLowerCase().replace(/[-_]/g, '')];
  if (meant && known.includes(meant)) return meant;
  const lower = unknown.toLowerCase();
  let best: string | undefined;
  let bestScore = Infinity;
  for (const k of known) {
    // Case slips (basedomain, BaseDomain) and separator slips (base-domain, base_domain) count as near-misses.
    const normalized = (s: string) => s.toLowerCase().replace(/[-_]/g, '');
    const score = normalized(k) === normalized(unknown) ? 0.5 : editDistance(lower, k.toLowerCase());
    if (score < bestScore) {
      bestScore = score;
      best = k;
    }
  }
  if (best === undefined) return undefined;
  const limit = Math.max(1, Math.min(3, Math.floor(Math.max(unknown.length, best.length) / 3)));
  return bestScore <= limit ? best : undefined;
}

export function unknownFieldMessage(field: string, known: readonly string[]): string {
  const near = nearestName(field, known);
  const escaped = JSON.stringify(field).slice(1, -1);
  const shown = escaped.length > 64 ? `${escaped.slice(0, 64)}…` : escaped;
  return near !== undefined
    ? `unknown field '${shown}' — did you mean '${near}'?`
    : `unknown field '${shown}' (known fields here: ${known.join(', ')})`;
}
