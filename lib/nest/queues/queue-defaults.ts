import { checkPolicyOptions, type CheckedPolicy } from '../../core/adds/job-options.js';
import type { JobPolicy, JobPolicyOptions } from '../../core/adds/types.js';
import { assertOptions } from '../../core/validate.js';
import { optionKeys } from '../option-keys.js';
import { checkProcessorDefaults, type ProcessorDefaults } from '../processors/processor-options.js';

/**
 * Job and processor defaults: of every queue at the root, of one queue in registerQueue, and of
 * relq/testing's FakeQueue (which uses the job part).
 */
export interface QueueDefaults {
  /** Job policy for jobs added without their own (attempts, backoff, leaseMs, retention). */
  job?: JobPolicyOptions;
  processor?: ProcessorDefaults;
}

/** `defaults`, checked: the job policy as given (merged over the root's or the built-in one later). */
export interface CheckedDefaults {
  job: CheckedPolicy | undefined;
  processor: ProcessorDefaults;
}

/** The defaults a module gives one queue: forRoot's under registerQueue's, the job policy resolved. */
export interface ModuleDefaults {
  /** Undefined when neither set one: the built-in policy. */
  job: Readonly<JobPolicy> | undefined;
  processor: ProcessorDefaults;
}

const DEFAULTS_KEYS = optionKeys<QueueDefaults>({ job: true, processor: true });

/**
 * `defaults` of forRoot, registerQueue or a FakeQueue. The job policy goes through the
 * engine's own check of it here, so that a mistake stops the app naming `defaults.job` and the
 * call it was given to; what the check returns is passed on, and the Queue takes it unchecked.
 */
export function checkDefaults(d: QueueDefaults | undefined): CheckedDefaults {
  if (d === undefined) return { job: undefined, processor: {} };
  assertOptions('defaults', d, DEFAULTS_KEYS);
  return {
    job: d.job === undefined ? undefined : checkPolicyOptions('defaults.job', d.job),
    processor: checkProcessorDefaults('defaults.processor', d.processor),
  };
}
