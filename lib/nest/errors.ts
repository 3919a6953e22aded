import { RelqError, ValidationError } from '../core/errors.js';

/**
 * A mistake in how relq is wired into the Nest app (options, decorators, modules),
 * thrown while the app starts so that it fails at once with a message that says what
 * to change.
 */
export class RelqConfigError extends RelqError {
  constructor(message: string) {
    super(`relq: ${message}`, 'RELQ_CONFIG');
  }
}

/**
 * Runs `check` (the engine's validators, or an engine constructor), turning their errors into
 * a config error that names `where`: the engine knows the option, the Nest layer where it was
 * given.
 */
export function validating<T>(where: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof RelqConfigError) throw err;
    // `where` already names the options object: "forRoot() options: unknown option 'x'", not "options: options: ..."
    if (err instanceof ValidationError && err.field === 'options') throw new RelqConfigError(`${where}: ${err.detail}`);
    if (err instanceof RelqError || err instanceof TypeError) throw new RelqConfigError(`${where}: ${err.message}`);
    throw err;
  }
}

/**
 * `QueueRegistry.addQueue()` of a name the app already has, or `addProcessor()` on a queue
 * that already has its processor: nothing was created. A caller that provisions queues more
 * than once (per tenant, on every request) may check `hasQueue(name)` first, or catch this.
 */
export class AlreadyRegisteredError extends RelqConfigError {
  constructor(message: string) {
    super(message);
  }
}
