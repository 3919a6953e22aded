import { resolvePolicy } from '../../core/adds/job-options.js';
import type { JobPolicyOptions } from '../../core/adds/types.js';
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

const DEFAULTS_KEYS = optionKeys<QueueDefaults>({ job: true, processor: true });

/**
 * `defaults` of forRoot, registerQueue or a FakeQueue. The job policy goes through the
 * engine's own check of it here, so that a mistake stops the app naming `defaults.job` and the
 * call it was given to.
 */
export function checkDefaults(d: QueueDefaults | undefined): QueueDefaults {
  if (d === undefined) return {};
  assertOptions('defaults', d, DEFAULTS_KEYS);
  if (d.job !== undefined) resolvePolicy('defaults.job', d.job);
  checkProcessorDefaults('defaults.processor', d.processor);
  return d;
}
