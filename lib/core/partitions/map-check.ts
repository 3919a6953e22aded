import { PartitionsMismatchError } from './errors.js';
import { partitionMapKey } from './layout.js';
import type { PartitionInternals } from './partition-internals.js';
import { partitionMapScript } from './scripts.js';

/** Once per PartitionedQueue object: the check that the queue's map holds its number of partitions. */
export interface MapCheck {
  /** Resolves once the map holds `partitions` (written by the first object to use the queue); a failure is thrown to the call and checked again by the next. */
  (): Promise<void>;
  /** Whether it passed: the add path skips the call then. */
  readonly passed: boolean;
}

/**
 * `register` lists the queue in the registry of queue names (registry.ts) once the map holds
 * its number: the logical queue is listed, with that number, and its partitions are not.
 */
export function mapCheck(first: PartitionInternals, prefix: string, name: string, partitions: number, register: () => Promise<void> | undefined): MapCheck {
  let state: Promise<void> | true | undefined;
  const check = (): Promise<void> => {
    if (state === true) return Promise.resolve();
    state ??= first.runOwnKeys(partitionMapScript, [partitionMapKey(prefix, name)], { partitions }).then(
      async (stored) => {
        if (stored.partitions !== partitions) throw new PartitionsMismatchError(name, partitions, stored.partitions);
        await register();
        state = true;
      },
      (err: unknown) => {
        state = undefined;
        throw err;
      },
    );
    return state as Promise<void>;
  };
  return Object.defineProperty(check, 'passed', { get: () => state === true }) as MapCheck;
}
