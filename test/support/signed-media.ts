// Signed site-config media for run tests: a fresh Ed25519 key trusted by the node (its public half in the node
// root's trusted-keys directory, as the factory MachineConfig installs it), the named files pinned in spec.sha256
// and site-config.yaml signed over its final bytes (base64 detached signature, DESIGN.md section 4).
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { TRUSTED_KEYS_DIR } from '../../src/paths';

export function signedMedia(nodeRoot: string, files: Record<string, string>, pinned: readonly string[]): Record<string, string> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  mkdirSync(path.join(nodeRoot, TRUSTED_KEYS_DIR), { recursive: true });
  writeFileSync(path.join(nodeRoot, TRUSTED_KEYS_DIR, 'factory.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
  const doc = parseDocument(files['site-config.yaml'] ?? '');
  doc.setIn(['spec', 'sha256'], Object.fromEntries(pinned.map((f) => [f, createHash('sha256').update(files[f] ?? '').digest('hex')])));
  const text = doc.toString();
  return { ...files, 'site-config.yaml': text, 'site-config.yaml.sig': sign(null, Buffer.from(text), privateKey).toString('base64') };
}
