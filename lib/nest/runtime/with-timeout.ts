import { timedOut } from '../relq.messages.js';

/**
 * `promise`, or a rejection once `ms` pass (Redis may be away: a lifecycle step or a health
 * read must not hang). The timer never keeps the process alive; a late rejection of
 * `promise` is swallowed.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(timedOut(what, ms))), ms);
    timer.unref();
  });
  promise.catch(() => undefined);
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
