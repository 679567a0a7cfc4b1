// RSA 2048 keys for the simulator's CAs and certificates, from a pool kept between runs.
//
// A simulator start needs about ten RSA keys (OpenShift's signers and serving certificates are RSA 2048), and RSA
// keygen costs 60–250 ms of CPU each on the 2-core reference machine: a whole `npm test` spent several minutes of
// CPU on keys no test looks at for more than being distinct. The pool keeps what earlier processes generated in
// ~/.cache/sno-reconfigure/sim-rsa-2048.pem, like the testbed's rootfs; a process hands its keys out in order, never
// one twice, so within a process (where simulators, CAs and the agent's trust meet) every key is as unique as a
// fresh one. Past the pool's end a process generates fresh keys and appends them for the next run.
import { generateKeyPairSync, createPrivateKey, createPublicKey } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface PooledKey {
  keyPem: string;
  spkiDer: Buffer;
}

/** Keys past this many are not written back: the pool's file stays under ~1 MB. */
const POOL_LIMIT = 512;

const poolFile = () => process.env.SNO_SIM_KEY_POOL ?? path.join(process.env.HOME || os.homedir(), '.cache', 'sno-reconfigure', 'sim-rsa-2048.pem');

let pooled: string[] | undefined;
let next = 0;

function readPool(file: string): string[] {
  try {
    // Only whole blocks: another process may be appending while this one reads.
    return readFileSync(file, 'utf8').match(/-----BEGIN RSA PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+?-----END RSA PRIVATE KEY-----\n/g) ?? [];
  } catch {
    return [];
  }
}

function appendToPool(file: string, keyPem: string): void {
  try {
    if ((statSync(file, { throwIfNoEntry: false })?.size ?? 0) > POOL_LIMIT * 1700) return;
    mkdirSync(path.dirname(file), { recursive: true });
    // One write of under 2 KB with O_APPEND: concurrent appenders do not interleave on a local filesystem.
    appendFileSync(file, keyPem);
  } catch {
    // A read-only home only costs the next run its keygen.
  }
}

/** The next RSA 2048 key of this process: from the pool while it lasts, then fresh (and kept for later runs). */
export function nextRsaKey(): PooledKey {
  const file = poolFile();
  pooled ??= readPool(file);
  let keyPem = pooled[next];
  next += 1;
  if (keyPem === undefined) {
    keyPem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    appendToPool(file, keyPem);
  }
  const spkiDer = createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' });
  return { keyPem, spkiDer };
}
