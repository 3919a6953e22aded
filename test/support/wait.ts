/** Waiting on conditions (not fixed sleeps), for tests and their support code. */

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until `p` settles (its error ignored), for at most `ms`: for a close that may hang.
 * Its timer ends with the wait, so that it keeps no process alive after it.
 */
export async function settledWithin(p: Promise<unknown> | undefined, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p?.catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

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
