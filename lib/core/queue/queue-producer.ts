import type { Queue } from './queue.js';

/**
 * The producing part of a `Queue`: its name and its adds. A service that only adds jobs can
 * type what it injects with it (`@InjectQueue('emails') queue: QueueProducer<EmailJob>`), so that
 * a test can hand it relq/testing's FakeQueue, which a `Queue` (a class with private state) could
 * not be.
 */
export type QueueProducer<Data = unknown> = Pick<Queue<Data>, 'name' | 'add' | 'addBulk' | 'tryAdd' | 'tryAddBulk' | 'addFlow'>;
