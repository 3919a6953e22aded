import type { SchedulerSpec, SchedulerTemplate } from '../../core/schedulers/types.js';
import { RelqConfigError } from '../errors.js';
import type { SchedulerDeclaration } from './scheduler-options.js';

/** Metadata key of `@Scheduled()`. */
export const SCHEDULED_METADATA = 'relq:scheduled';

/**
 * Declares a job scheduler for the `@Process()` method it decorates: a job at every slot of
 * `spec` on the processor's queue, named for the method's job name unless the template
 * names it. Upserted when the app starts (docs/schedulers.md). May be repeated on a method.
 */
export function Scheduled(id: string, spec: SchedulerSpec, template?: SchedulerTemplate): MethodDecorator {
  return (_target, _key, descriptor) => {
    const method: unknown = descriptor.value;
    if (typeof method !== 'function') throw new RelqConfigError('@Scheduled() must decorate a method');
    const list = (Reflect.getOwnMetadata(SCHEDULED_METADATA, method) as SchedulerDeclaration[] | undefined) ?? [];
    const decl: SchedulerDeclaration = template === undefined ? { id, spec } : { id, spec, template };
    Reflect.defineMetadata(SCHEDULED_METADATA, [...list, decl], method);
  };
}

/** The schedulers `@Scheduled()` declared on a method, the job name filled in. */
export function scheduledOn(method: Function, jobName: string | undefined): SchedulerDeclaration[] {
  const list = (Reflect.getOwnMetadata(SCHEDULED_METADATA, method) as SchedulerDeclaration[] | undefined) ?? [];
  if (jobName === undefined) return list;
  return list.map((d) => (d.template?.opts?.name !== undefined ? d : { ...d, template: { ...d.template, opts: { ...d.template?.opts, name: jobName } } }));
}
