import { ValidationError } from '../errors.js';
import { PartitionsMismatchError } from './errors.js';
import { partitionMapKey } from './layout.js';
import type { PartitionSet } from './partition-set.js';
import { partitionMapScript, type StoredPartitionMap } from './scripts.js';

/** Reading calls (counts, pages) read the map again when their last reading is older than this: a resize elsewhere shows within it. */
const FRESH_MS = 1_000;

/** A PartitionedQueue object's look at its queue's map (partition-map.lua). */
export interface MapCheck {
  /**
   * Resolves once the map was read and followed (written by the first object to use the
   * queue): a declared number the queue never had is refused (PartitionsMismatchError). A
   * failure is thrown to the call and tried again by the next.
   */
  (): Promise<void>;
  /** Whether it passed: the add path skips the call then. */
  readonly passed: boolean;
  /** Reads the map again and follows it (a resize, here or elsewhere); concurrent calls share one read. */
  refresh(): Promise<StoredPartitionMap>;
  /** The check, then a fresh read when the last one is older than a second (reading calls). */
  fresh(): Promise<void>;
}

/**
 * `register` lists the queue in the registry of queue names (registry.ts) once the map was
 * followed: the logical queue is listed, with its number of partitions, and its partitions
 * are not.
 */
export function mapCheck<Data, Result>(
  set: PartitionSet<Data, Result>,
  prefix: string,
  name: string,
  declared: number,
  /** The object splits globalConcurrency or a limiter into shares, which a resized queue's partitions would not add up to. */
  shares: boolean,
  register: () => Promise<void> | undefined,
): MapCheck {
  let state: Promise<void> | true | undefined;
  let reading: Promise<StoredPartitionMap> | undefined;
  let readAt = -Infinity;
  const read = (): Promise<StoredPartitionMap> => {
    reading ??= set.calls[0]!.runOwnKeys(partitionMapScript, [partitionMapKey(prefix, name)], { partitions: declared })
      .then((stored) => {
        if (!stored.sizes.includes(declared)) throw new PartitionsMismatchError(name, declared, stored.partitions);
        if (shares && stored.sizes.length > 1) {
          throw new ValidationError('globalConcurrency', `and limiter are not supported on queue '${name}': it was resized, and their shares per partition do not follow a resize yet (docs/scale-out.md)`);
        }
        readAt = Date.now();
        set.adopt(stored);
        return stored;
      })
      .finally(() => (reading = undefined));
    return reading;
  };
  const check = (): Promise<void> => {
    if (state === true) return Promise.resolve();
    state ??= read().then(
      async () => {
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
  const fresh = async (): Promise<void> => {
    await check();
    if (Date.now() - readAt > FRESH_MS) await read();
  };
  Object.defineProperty(check, 'passed', { get: () => state === true });
  return Object.assign(check, { refresh: read, fresh }) as MapCheck;
}
