// Waiting for an outcome in tests: polls `condition` until it holds. The limit only stops a broken test
// from hanging; it is not an assertion on speed.
export async function waitFor(condition: () => boolean, what: string, limitMs = 30_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > limitMs) throw new Error(`gave up waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
