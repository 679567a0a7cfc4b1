// RSA serving keys (2048 bits, like the keys OpenShift's operators generate), made off the event loop in
// libuv's thread pool and, when asked in time, ahead of need: one key takes 50–300 ms on the bench's two
// cores, and the three the domain step issues held up its writes — and so the start of the longest rollout —
// by about 0.7 s (issue #8). The run asks for them once the site network is in place; the domain step takes them
// minutes later, after kubelet and the API have come up.
import { generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

export interface ServingKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

const generateRsa = promisify(generateKeyPair);

export function generateServingKey(): Promise<ServingKey> {
  return generateRsa('rsa', { modulusLength: 2048 });
}

/** Keys generated ahead of need; each is handed out once. */
export class ServingKeyPool {
  private readonly ready: Promise<ServingKey>[] = [];

  /** Starts generating keys until `count` are ready or on their way. */
  prepare(count: number): void {
    while (this.ready.length < count) {
      const key = generateServingKey();
      // Nobody may ever take it (the certificates turned out to be in place already).
      key.catch(() => undefined);
      this.ready.push(key);
    }
  }

  /** A prepared key, or a new one. */
  take(): Promise<ServingKey> {
    return this.ready.shift() ?? generateServingKey();
  }

  /** Keys prepared and not taken. */
  get size(): number {
    return this.ready.length;
  }

  /** Forgets the keys nobody took (a BackgroundTask: the run ends). */
  async stop(): Promise<void> {
    this.ready.length = 0;
  }
}
