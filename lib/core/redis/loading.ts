import type { Redis } from 'ioredis';
import { CALL_DEADLINE_MS, type ClientHandle } from './connection.js';
import { isLoading } from './redis-errors.js';

/** How often a call refused with LOADING is sent again. */
const LOADING_RETRY_MS = 100;

/**
 * What to do after `send()` failed with `err`: rethrow it, unless it is LOADING (the server is
 * reading its data after a restart; the command did not run): then `send()` again until the
 * server answers otherwise or the call's reply wait (its `commandTimeout`, else relq's deadline)
 * runs out, as ioredis's ready check would have waited. Rejects with the last failure.
 */
export async function afterLoading<T>(handle: ClientHandle, err: unknown, send: () => Promise<T>): Promise<T> {
  const end = Date.now() + (handle.callDeadlineMs ?? (handle.client as Redis).options.commandTimeout ?? CALL_DEADLINE_MS);
  let last = err;
  while (isLoading(last) && Date.now() + LOADING_RETRY_MS <= end) {
    await new Promise((resolve) => setTimeout(resolve, LOADING_RETRY_MS));
    try {
      return await send();
    } catch (e) {
      last = e;
    }
  }
  throw last;
}
