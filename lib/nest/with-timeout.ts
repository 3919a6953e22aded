import { withDeadline } from '../core/deadline.js';
import { timedOut } from './relq.messages.js';

/** `promise`, or a rejection naming `what` once `ms` pass (a lifecycle step or a health read must not hang). */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return withDeadline(promise, ms, timedOut(what, ms));
}
