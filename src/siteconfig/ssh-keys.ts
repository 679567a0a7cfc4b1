// spec.ssh: OpenSSH public keys for the `core` user, one per line as in authorized_keys (sshd(8) AUTHORIZED_KEYS
// FILE FORMAT), without options: the keys go into a MachineConfig's passwd.users[core].sshAuthorizedKeys, which
// the MCD writes verbatim, and into an early authorized_keys.d file.
import type { Findings } from './problems';

/** The key types OpenSSH on RHCOS 8/9 accepts for user keys (ssh(1) -t; DSA is gone from RHEL 9). */
const KEY_TYPES = ['ssh-ed25519', 'ssh-rsa', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'sk-ssh-ed25519@openssh.com', 'sk-ecdsa-sha2-nistp256@openssh.com'];
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Bytes as readable text: printable ASCII as it is, anything else (and the backslash) as \\xNN; at most `max` bytes. */
function escapedBytes(bytes: Buffer, max: number): string {
  let out = '';
  for (const b of bytes.subarray(0, max)) out += b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`;
  return bytes.length > max ? `${out}…` : out;
}

/** What is wrong with one public key line, in words; undefined when it is a usable key. */
export function sshPublicKeyProblem(line: string): string | undefined {
  const text = line.trim();
  if (/PRIVATE KEY/.test(text)) return 'is a PRIVATE key: give the public key instead (the .pub file, one line starting with ssh-ed25519, ssh-rsa or ecdsa-sha2-…), and keep the private key off the media';
  const [type = '', blob = ''] = text.split(/\s+/);
  if (!KEY_TYPES.includes(type)) {
    return KEY_TYPES.some((t) => text.includes(` ${t} `))
      ? 'has options before the key type: give the key line alone (type, key, comment), without options'
      : `does not start with an SSH public key type (${KEY_TYPES.slice(0, 3).join(', ')} …)`;
  }
  const bytes = BASE64.test(blob) ? Buffer.from(blob, 'base64') : undefined;
  // The blob starts with its own type as an SSH string (RFC 4253 section 6.6): a uint32 length and the name.
  const embedded = bytes && bytes.length > 4 ? bytes.subarray(4, 4 + bytes.readUInt32BE(0)) : undefined;
  if (embedded === undefined) return `is not a complete ${type} key: the part after '${type}' must be the key's base64 (copy the whole line of the .pub file)`;
  if (embedded.toString('latin1') !== type) return `says '${type}' but holds a key of type '${escapedBytes(embedded, 40)}': copy the line of the .pub file unchanged`;
  return undefined;
}

/** The key lines of an authorized_keys-style file: blank lines and # comments skipped, each line checked. */
export function keysOfFile(f: Findings, text: string, field: string, ref: string): string[] {
  if (/PRIVATE KEY/.test(text)) {
    f.error(field, `'${ref}' holds a PRIVATE key: give the public key file instead (the .pub ssh-keygen wrote beside it), and keep the private key off the media`);
    return [];
  }
  const keys: string[] = [];
  let refused = false;
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const problem = sshPublicKeyProblem(line);
    if (problem) {
      refused = true;
      f.error(field, `'${ref}' line ${i + 1} ${problem}`);
    } else keys.push(line);
  });
  if (keys.length === 0 && !refused) f.error(field, `'${ref}' holds no public key: one key per line, as in an authorized_keys file`);
  return keys;
}

/** Keys in order, each (type and key material) once: a key given inline and in the file is written once. */
export function distinctKeys(keys: string[]): string[] {
  const seen = new Set<string>();
  return keys.filter((k) => {
    const id = k.split(/\s+/).slice(0, 2).join(' ');
    return seen.has(id) ? false : (seen.add(id), true);
  });
}
