import { UnrecoverableError } from '../../core/errors.js';
import { batchResultError, type BatchOutcome } from '../../core/worker/batch-worker.js';
import type { Job } from '../../core/worker/worker.js';
import type { HandlerDefinition, ProcessorDefinition } from './processor-definition.js';
import type { ResolvedBatch } from './handler-options.js';
import * as msg from '../relq.messages.js';
import type { HandlerStatus } from './handler-router.js';

type Outcomes = ReadonlyArray<BatchOutcome<unknown>> | void;

/**
 * The handler the engine BatchWorkers of a batch processor call: passes the batch to the
 * class's one `@Process({ batch })` method. A named batch handler gets only the jobs of
 * its name; jobs of other names in the same lease are dead-lettered (like jobs without a
 * handler on a processor of named handlers), and its outcomes are put back in lease order.
 */
export class BatchRouter {
  private readonly handler: HandlerDefinition;
  /** What the BatchWorker leases: `size` jobs, waiting up to `waitMs` for them. */
  readonly batch: ResolvedBatch;
  private activeJobs = 0;
  private activeBatches = 0;

  constructor(private readonly def: ProcessorDefinition) {
    this.handler = def.handlers[0]!;
    this.batch = this.handler.batch!;
  }

  readonly handle = async (jobs: Array<Job<unknown>>): Promise<Outcomes> => {
    const name = this.handler.jobName;
    const mine = name === undefined ? jobs : jobs.filter((j) => j.name === name);
    if (mine.length === jobs.length) return this.run(jobs); // the BatchWorker checks the outcomes
    const outcomes = new Map<Job<unknown>, BatchOutcome<unknown>>();
    for (const job of jobs) {
      if (job.name !== name) {
        outcomes.set(job, {
          ok: false,
          retry: false,
          error: new UnrecoverableError(msg.notThisBatch(job.name, this.def.className, this.def.queueName, name!)),
        });
      }
    }
    if (mine.length > 0) {
      let returned: Outcomes;
      try {
        returned = await this.run(mine);
      } catch (error) {
        returned = mine.map(() => ({ ok: false, error }));
      }
      const error = batchResultError(mine.length, returned);
      if (error) returned = mine.map(() => ({ ok: false, error }));
      mine.forEach((job, i) => outcomes.set(job, returned ? returned[i]! : { ok: true }));
    }
    return jobs.map((job) => outcomes.get(job)!);
  };

  private async run(jobs: Array<Job<unknown>>): Promise<Outcomes> {
    this.activeJobs += jobs.length;
    this.activeBatches += 1;
    try {
      const instance = (await this.def.instances.get(jobs)) as Record<string, unknown>;
      const method = instance[this.handler.methodName] as (jobs: Array<Job<unknown>>) => Outcomes | Promise<Outcomes>;
      return await method.call(instance, jobs);
    } finally {
      this.activeJobs -= jobs.length;
      this.activeBatches -= 1;
    }
  }

  status(): HandlerStatus[] {
    const h = this.handler;
    return [
      {
        jobName: h.jobName ?? null,
        method: h.methodName,
        concurrency: h.concurrency,
        active: this.activeJobs,
        waiting: 0,
        batch: { ...this.batch, running: this.activeBatches },
      },
    ];
  }
}
