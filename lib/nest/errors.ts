import { RelqError } from '../core/errors.js';

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
