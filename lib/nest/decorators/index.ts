export { InjectQueue } from './inject-queue.decorator.js';
export { Processor } from './processor.decorator.js';
export {
  Process,
  type BatchProcessDecorator,
  type BatchProcessMethod,
  type BatchProcessOptionsArg,
  type BatchProcessResult,
  type ProcessDecorator,
  type ProcessMethod,
} from './process.decorator.js';
export { OnWorkerEvent } from './on-worker-event.decorator.js';
export { QueueEventsListener } from './queue-events-listener.decorator.js';
export { OnQueueEvent } from './on-queue-event.decorator.js';
