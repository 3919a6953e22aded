import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { QueueModuleOptions } from './interfaces/module-options.interface.js';
import { RELQ_MODULE_OPTIONS } from './relq.constants.js';

/**
 * forRoot / forRootAsync (useFactory, useClass, useExisting with `createRelqOptions()`)
 * come from Nest's ConfigurableModuleBuilder; the module is always global. @internal
 */
export const {
  ConfigurableModuleClass: ConfigurableQueueCoreModule,
  MODULE_OPTIONS_TOKEN,
} = new ConfigurableModuleBuilder<QueueModuleOptions>({ optionsInjectionToken: RELQ_MODULE_OPTIONS, moduleName: 'Relq' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createRelqOptions')
  .setExtras({}, (definition) => ({ ...definition, global: true }))
  .build();
