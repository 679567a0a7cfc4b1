// Signed site-config media for run tests: a fresh Ed25519 key trusted by the node (its public half in the node
// root's trusted-keys directory, as the factory MachineConfig installs it), the named files pinned in spec.sha256
// and site-config.yaml signed over its final bytes (base64 detached signature, DESIGN.md section 4). Signed means
// bound: the config gets metadata.issued and, unless it names its machine already, a spec.match on the node
// root's serial number (written under sys/class/dmi/id when the root has none).
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { TRUSTED_KEYS_DIR } from '../../src/paths';

/** When signed test media are issued (before any test's "now", after nothing a test records). */
export const SIGNED_MEDIA_ISSUED = '2026-11-01T09:00:00Z';

/** The node root's serial number, written first when it has none. */
function serialOf(nodeRoot: string): string {
  const file = path.join(nodeRoot, 'sys/class/dmi/id/product_serial');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, 'SIGNED-MEDIA-0001\n');
  return 'SIGNED-MEDIA-0001';
}

export function signedMedia(nodeRoot: string, files: Record<string, string>, pinned: readonly string[], opts: { issued?: string } = {}): Record<string, string> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  mkdirSync(path.join(nodeRoot, TRUSTED_KEYS_DIR), { recursive: true });
  writeFileSync(path.join(nodeRoot, TRUSTED_KEYS_DIR, 'factory.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
  const doc = parseDocument(files['site-config.yaml'] ?? '');
  if (!doc.hasIn(['metadata', 'issued'])) doc.setIn(['metadata', 'issued'], opts.issued ?? SIGNED_MEDIA_ISSUED);
  if (!doc.hasIn(['spec', 'match'])) doc.setIn(['spec', 'match'], { serialNumber: serialOf(nodeRoot) });
  doc.setIn(['spec', 'sha256'], Object.fromEntries(pinned.map((f) => [f, createHash('sha256').update(files[f] ?? '').digest('hex')])));
  const text = doc.toString();
  return { ...files, 'site-config.yaml': text, 'site-config.yaml.sig': sign(null, Buffer.from(text), privateKey).toString('base64') };
}

/**
 * Signed image-based install media: manifest.json gets its sno_reconfigure binding (the node root's serial number,
 * `issued`) and pins of every other file under cluster-configuration/ and extra-manifests/ (relative to
 * manifest.json), and manifest.json.sig over its final bytes.
 */
export function signedImageBasedMedia(nodeRoot: string, files: Record<string, string>, opts: { issued?: string; binding?: Record<string, unknown>; unpinned?: readonly string[] } = {}): Record<string, string> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  mkdirSync(path.join(nodeRoot, TRUSTED_KEYS_DIR), { recursive: true });
  writeFileSync(path.join(nodeRoot, TRUSTED_KEYS_DIR, 'factory.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
  const manifestFile = 'cluster-configuration/manifest.json';
  const pinned = Object.keys(files).filter((f) => f !== manifestFile && !opts.unpinned?.includes(f));
  const sha256 = Object.fromEntries(pinned.map((f) => [path.posix.relative('cluster-configuration', f), createHash('sha256').update(files[f]!).digest('hex')]));
  const seed = JSON.parse(files[manifestFile]!) as Record<string, unknown>;
  seed.sno_reconfigure = opts.binding ?? { match: { serialNumber: serialOf(nodeRoot) }, issued: opts.issued ?? SIGNED_MEDIA_ISSUED, sha256 };
  const text = JSON.stringify(seed);
  return { ...files, [manifestFile]: text, [`${manifestFile}.sig`]: sign(null, Buffer.from(text), privateKey).toString('base64') };
}
