import { getQueueToken } from '../nest/relq.constants.js';
import type { FakeQueue } from './fake-queue.js';

/**
 * A Nest provider that injects `fake` where `@InjectQueue(fake.name)` asks for its queue: for a
 * testing module's `providers` when it does not import QueueModule. (With QueueModule, override
 * it instead: `.overrideProvider(getQueueToken('emails')).useValue(fake)`.)
 */
export function provideFakeQueue<Data, Result>(fake: FakeQueue<Data, Result>): { provide: string; useValue: FakeQueue<Data, Result> } {
  return { provide: getQueueToken(fake.name), useValue: fake };
}
