/**
 * fc.assert for the property suites, replayable from the environment: RELQ_FC_SEED and
 * RELQ_FC_PATH replay a reported failure; the failure message ends with the command that does.
 */
import fc from 'fast-check';

const SEED = process.env.RELQ_FC_SEED !== undefined ? Number(process.env.RELQ_FC_SEED) : undefined;
const PATH = process.env.RELQ_FC_PATH;

/** `command(seed, path, message)`: the shell line that replays this failure. */
export async function assertReplayable<Ts>(
  prop: fc.IAsyncPropertyWithHooks<Ts>,
  numRuns: number,
  command: (seed: string, path: string, message: string) => string,
): Promise<void> {
  const params: fc.Parameters<Ts> = { numRuns };
  if (SEED !== undefined) params.seed = SEED;
  if (PATH !== undefined) {
    params.path = PATH;
    params.endOnFailure = true;
  }
  try {
    await fc.assert(prop, params);
  } catch (err) {
    if (err instanceof Error) {
      const seed = /seed: (-?\d+)/.exec(err.message)?.[1] ?? '<seed>';
      const path = /path: "([^"]*)"/.exec(err.message)?.[1] ?? '<path>';
      err.message += `\n\nReplay: RELQ_FC_SEED=${seed} RELQ_FC_PATH='${path}'${command(seed, path, err.message)}`;
    }
    throw err;
  }
}
