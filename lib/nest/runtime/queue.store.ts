import { Injectable, Logger } from '@nestjs/common';
import { Queue } from '../../core/queue/queue.js';
import { RelqConfigError } from '../errors.js';
import type { ResolvedQueueOptions } from '../options.js';
import { validating } from '../options.js';
import { RelqConnection } from './relq-connection.js';

/** One queue registered with `registerQueue`, and how it was configured. */
export interface RegisteredQueue {
  readonly queue: Queue<unknown, unknown>;
  readonly options: ResolvedQueueOptions;
}

/**
 * Every queue registered in the app, one `Queue` object per name however many feature
 * modules register it (they must agree on its options). @internal
 */
@Injectable()
export class QueueStore {
  private readonly logger = new Logger('relq');
  private readonly entries = new Map<string, RegisteredQueue & { signature: string }>();

  /** The queue for `options.name`, created on first registration. */
  register(options: ResolvedQueueOptions, connection: RelqConnection): Queue<unknown, unknown> {
    const signature = signatureOf(options);
    const existing = this.entries.get(options.name);
    if (existing) {
      if (existing.signature !== signature) {
        throw new RelqConfigError(
          `queue '${options.name}' is registered more than once with different options; ` +
            'register it once (e.g. in a shared module that exports QueueModule) or give every registration the same options',
        );
      }
      return existing.queue;
    }
    const queue = validating(`registerQueue('${options.name}')`, () => {
      return new Queue<unknown, unknown>(options.name, {
        ...options.engine,
        connection: options.connection ?? connection.client,
        // eviction policy, ghost ids: into the app's log
        onWarning: (w) => this.logger.warn(w.message),
      });
    });
    this.entries.set(options.name, { queue, options, signature });
    return queue;
  }

  get(name: string): RegisteredQueue | undefined {
    return this.entries.get(name);
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  all(): RegisteredQueue[] {
    return [...this.entries.values()];
  }

  /** Closes every queue (and any connection a queue opened for itself). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => e.queue.close().catch(() => undefined)));
  }
}

function signatureOf(o: ResolvedQueueOptions): string {
  return JSON.stringify({ ...o, connection: o.connection === undefined ? null : typeof o.connection === 'string' ? o.connection : 'object' });
}
