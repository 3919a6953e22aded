/** Waiting on conditions (not fixed sleeps), for tests and their support code. */

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `cond` until it holds; throws naming `what` after `timeoutMs`. */
export async function waitUntil(cond: () => boolean | Promise<boolean>, what = 'condition', timeoutMs = 5000, stepMs = 10): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(stepMs);
  }
}

/**
 * Polls `check` until it returns a value (not undefined); a check that throws counts as not
 * yet (a server still starting, a node away). Throws naming `what` after `timeoutMs`.
 */
export async function waitForValue<T>(check: () => Promise<T | undefined>, what: string, timeoutMs: number, stepMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(stepMs);
  }
}
