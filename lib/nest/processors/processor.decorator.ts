import { Injectable, SetMetadata } from '@nestjs/common';
import type { ProcessorOptions } from './processor-options.js';
import { PROCESSOR_METADATA } from '../relq.constants.js';

/** What `@Processor()` records on a class. */
export interface ProcessorMetadata {
  queueName: string;
  options: ProcessorOptions;
}

/**
 * Marks a provider class as the consumer of a queue: one lease loop per class leases the
 * queue's jobs and routes each by `job.name` to its `@Process(name)` method, or to the
 * default `@Process()` one. List the class in a module's `providers`.
 */
export function Processor(queueName: string, options: ProcessorOptions = {}): ClassDecorator {
  return (target) => {
    const meta: ProcessorMetadata = { queueName, options };
    SetMetadata(PROCESSOR_METADATA, meta)(target);
    if (options.scope !== undefined || options.durable !== undefined) {
      const scopeOptions: { scope?: ProcessorOptions['scope']; durable?: boolean } = {};
      if (options.scope !== undefined) scopeOptions.scope = options.scope;
      if (options.durable !== undefined) scopeOptions.durable = options.durable;
      Injectable(scopeOptions)(target);
    }
  };
}
