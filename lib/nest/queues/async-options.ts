import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency, Type } from '@nestjs/common';
import { RelqConfigError } from '../errors.js';
import * as msg from '../relq.messages.js';

/** A factory function's arguments come from `inject`; typed by the factory itself. */
export type FactoryFunction<T> = (...args: never[]) => T | Promise<T>;

export type FactoryInject = Array<InjectionToken | OptionalFactoryDependency>;

/** Options made by a provider: exactly one of useFactory, useClass, useExisting. */
export interface AsyncOptions<Options, Factory> extends Pick<ModuleMetadata, 'imports'> {
  useFactory?: FactoryFunction<Options>;
  inject?: FactoryInject;
  useClass?: Type<Factory>;
  useExisting?: Type<Factory>;
}

/** Refuses async options that give no way, or more than one, to make the options (`where` names the call). */
export function assertOneWay(where: string, options: AsyncOptions<unknown, unknown>): void {
  const ways = [options.useFactory, options.useClass, options.useExisting].filter((w) => w !== undefined).length;
  if (ways !== 1) throw new RelqConfigError(msg.oneWayNeeded(where, ways));
}
