import { RelqConfigError } from '../errors.js';

/** @internal The decorators whose methods relq calls on events (named in messages). */
export type EventDecorator = '@OnWorkerEvent' | '@OnQueueEvent';

/** @internal What an event decorator (`@OnWorkerEvent()`, `@OnQueueEvent()`) records on a method. */
export interface EventMethodMetadata<T extends string> {
  types: T[];
}

/**
 * @internal The body of `@OnWorkerEvent()` and `@OnQueueEvent()`: records `type` under
 * `metadataKey`, after the types the same decorator already recorded (a method may listen to
 * several events).
 */
export function eventMethodDecorator<T extends string>(decorator: string, metadataKey: string, type: T): MethodDecorator {
  return (_target, _key, descriptor) => {
    const method = descriptor.value as unknown;
    if (typeof method !== 'function') throw new RelqConfigError(`${decorator} must decorate a method`);
    const previous = Reflect.getOwnMetadata(metadataKey, method) as EventMethodMetadata<T> | undefined;
    const meta: EventMethodMetadata<T> = { types: [...(previous?.types ?? []), type] };
    Reflect.defineMetadata(metadataKey, meta, method);
  };
}
