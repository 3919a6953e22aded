/**
 * `promise`, or a rejection with `message` once `ms` pass without it settling (Redis may be
 * away: a call, a lifecycle step or a health read must not hang). The work itself may still
 * finish later; its late outcome is ignored. The timer never keeps the process alive.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
    timer.unref();
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
