import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  getQueueToken,
  InjectQueue,
  Process,
  Processor,
  Queue,
  QueueModule,
  QueueRegistry,
  RelqConfigError,
  type Job,
  type QueueModuleOptions,
  type QueueModuleOptionsFactory,
} from '../../lib/nest/index.js';
import { uniquePrefix } from '../support/redis.js';
import { startApp, useApps } from './app-bed.js';

const bed = useApps();
const { apps, start } = bed;

/** A stand-in for @nestjs/config's ConfigService. */
@Injectable()
class ConfigService {
  readonly values: Record<string, string> = {};
  get(key: string): string {
    const v = this.values[key];
    if (v === undefined) throw new Error(`no config ${key}`);
    return v;
  }
}

function configModule(values: Record<string, string>) {
  @Module({ providers: [{ provide: ConfigService, useFactory: () => Object.assign(new ConfigService(), { values }) }], exports: [ConfigService] })
  class ConfigModule {}
  return ConfigModule;
}

interface Ping {
  n: number;
}

@Processor('pings')
class PingProcessor {
  @Process()
  run(job: Job<Ping>): number {
    return job.data.n * 2;
  }
}

@Injectable()
class PingProducer {
  constructor(@InjectQueue('pings') readonly queue: Queue<Ping, number>) {}
}

@Module({ imports: [QueueModule.registerQueue({ name: 'pings' })], providers: [PingProcessor, PingProducer] })
class PingModule {}

describe('wiring', () => {
  test('forRoot + registerQueue in a feature module: one shared Queue per name, injectable by token', async () => {
    const prefix = uniquePrefix();

    @Module({ imports: [QueueModule.registerQueue({ name: 'pings' })] })
    class OtherFeature {}

    const app = await start(QueueModule.forRoot({ connection: bed.redis.url, prefix }), PingModule, OtherFeature);
    const producer = app.get(PingProducer);
    expect(producer.queue).toBeInstanceOf(Queue);
    expect(producer.queue.prefix).toBe(prefix);
    expect(app.get(getQueueToken('pings'), { strict: false })).toBe(producer.queue);
    const { id } = await producer.queue.add({ n: 21 });
    expect(await producer.queue.waitForResult(id, { timeoutMs: 3000 })).toBe(42);
  });

  test('forRootAsync with useFactory + inject (ConfigService) and registerQueueAsync', async () => {
    const prefix = uniquePrefix();
    const Config = configModule({ REDIS_URL: bed.redis.url, PREFIX: prefix, ATTEMPTS: '7' });

    @Module({
      imports: [
        QueueModule.registerQueueAsync({
          name: 'reports',
          imports: [Config],
          inject: [ConfigService],
          useFactory: (config: ConfigService) => ({ defaults: { job: { attempts: Number(config.get('ATTEMPTS')) } } }),
        }),
      ],
    })
    class Reports {}

    const app = await start(
      QueueModule.forRootAsync({
        imports: [Config],
        inject: [ConfigService],
        useFactory: (config: ConfigService) => ({ connection: config.get('REDIS_URL'), prefix: config.get('PREFIX') }),
      }),
      Reports,
    );
    const queue = app.get(QueueRegistry).getQueue('reports');
    expect(queue.prefix).toBe(prefix);
    expect(queue.defaults.attempts).toBe(7);
    const { id } = await queue.add({});
    expect((await queue.getJob(id))?.maxAttempts).toBe(7);
  });

  test('job defaults of forRoot and registerQueue: keepCompleted and keepDead merge field by field', async () => {
    @Module({ imports: [QueueModule.registerQueue({ name: 'kept', defaults: { job: { keepCompleted: { count: 5 } } } })] })
    class Kept {}
    const root = { connection: bed.redis.url, prefix: uniquePrefix(), defaults: { job: { keepCompleted: { ageMs: 60_000 }, keepDead: { count: 10 } } } };
    const app = await start(QueueModule.forRoot(root), Kept);
    const queue = app.get(QueueRegistry).getQueue('kept');
    expect(queue.defaults).toMatchObject({ keepCompletedMs: 60_000, keepCompletedCount: 5, keepDeadCount: 10 });
    await queue.add({});
    const [lease] = await queue.lease();
    expect(lease!.job.policy).toMatchObject({ keepCompletedMs: 60_000, keepCompletedCount: 5, keepDeadCount: 10 });
  });

  test('forRootAsync with useClass', async () => {
    const prefix = uniquePrefix();
    @Injectable()
    class RelqConfig implements QueueModuleOptionsFactory {
      createRelqOptions(): QueueModuleOptions {
        return { connection: bed.redis.url, prefix };
      }
    }
    const app = await start(QueueModule.forRootAsync({ useClass: RelqConfig }), PingModule);
    const { queue } = app.get(PingProducer);
    expect(queue.prefix).toBe(prefix);
    const { id } = await queue.add({ n: 1 });
    expect(await queue.waitForResult(id, { timeoutMs: 3000 })).toBe(2);
  });

  test('a client passed in is shared and left open', async () => {
    const client = new Redis(bed.redis.url);
    try {
      const app = await start(QueueModule.forRoot({ connection: client, prefix: uniquePrefix() }), PingModule);
      const { queue } = app.get(PingProducer);
      expect(queue.client).toBe(client);
      await app.close();
      apps.length = 0;
      expect(await client.ping()).toBe('PONG');
    } finally {
      client.disconnect();
    }
  });
});

describe('role switch', () => {
  test('workers: { enabled: false } produces but runs no lease loop; QueueRegistry can start and stop loops', async () => {
    const app = await start(
      QueueModule.forRoot({
        connection: bed.redis.url,
        prefix: uniquePrefix(),
        workers: { enabled: false },
        defaults: { processor: { blockMs: 200 } },
      }),
      PingModule,
    );
    const registry = app.get(QueueRegistry);
    const { queue } = app.get(PingProducer);
    const { id } = await queue.add({ n: 5 });
    await new Promise((r) => setTimeout(r, 300));
    expect((await queue.getJob(id))?.state).toBe('pending');
    expect(registry.getProcessors()).toEqual([expect.objectContaining({ processor: 'PingProcessor', state: 'stopped', alive: false })]);

    // Switch the role at runtime.
    expect(await registry.startWorkers('pings')).toBe(1);
    expect(await queue.waitForResult(id, { timeoutMs: 10_000 })).toBe(10);
    expect(registry.getProcessors()[0]!.state).not.toBe('stopped');

    expect(await registry.stopWorkers()).toBe(1);
    const second = await queue.add({ n: 6 });
    await new Promise((r) => setTimeout(r, 300));
    expect((await queue.getJob(second.id))?.state).toBe('pending');
    expect(await registry.startWorkers()).toBe(1);
    expect(await queue.waitForResult(second.id, { timeoutMs: 10_000 })).toBe(12);
  });
});

describe('bootstrap errors', () => {
  async function bootError(...imports: NonNullable<Parameters<typeof startApp>[0]['imports']>): Promise<Error> {
    try {
      const app = await startApp({ imports });
      await app.close();
    } catch (err) {
      return err as Error;
    }
    throw new Error('the app started, but an error was expected');
  }

  test('a processor for a queue that is not registered', async () => {
    @Processor('nowhere')
    class Orphan {
      @Process()
      run(): void {}
    }
    @Module({ imports: [QueueModule.registerQueue({ name: 'elsewhere' })], providers: [Orphan] })
    class M {}
    const err = await bootError(QueueModule.forRoot({ connection: bed.redis.url }), M);
    expect(err).toBeInstanceOf(RelqConfigError);
    expect(err.message).toMatch(/@Processor\('nowhere'\) Orphan: queue 'nowhere' is not registered\. Add QueueModule\.registerQueue\(\{ name: 'nowhere' \}\)/);
    expect(err.message).toMatch(/registered queues: elsewhere/);
  });

  test('two handlers for the same job name', async () => {
    @Processor('dupe')
    class Dupe {
      @Process('welcome')
      one(): void {}
      @Process('welcome')
      two(): void {}
    }
    @Module({ imports: [QueueModule.registerQueue({ name: 'dupe' })], providers: [Dupe] })
    class M {}
    const err = await bootError(QueueModule.forRoot({ connection: bed.redis.url }), M);
    expect(err).toBeInstanceOf(RelqConfigError);
    expect(err.message).toMatch(/@Processor\('dupe'\) Dupe: two handlers for job name 'welcome', Dupe\.one and Dupe\.two/);
  });

  test('two default handlers, and two processor classes for one queue', async () => {
    @Processor('d2')
    class TwoDefaults {
      @Process()
      one(): void {}
      @Process()
      two(): void {}
    }
    @Module({ imports: [QueueModule.registerQueue({ name: 'd2' })], providers: [TwoDefaults] })
    class M1 {}
    expect((await bootError(QueueModule.forRoot({ connection: bed.redis.url }), M1)).message).toMatch(/two default handlers/);

    @Processor('shared')
    class A {
      @Process()
      run(): void {}
    }
    @Processor('shared')
    class B {
      @Process('x')
      run(): void {}
    }
    @Module({ imports: [QueueModule.registerQueue({ name: 'shared' })], providers: [A, B] })
    class M2 {}
    expect((await bootError(QueueModule.forRoot({ connection: bed.redis.url }), M2)).message).toMatch(
      /queue 'shared' has two processors, A and B/,
    );
  });

  test('invalid options: root, queue, processor and handler', async () => {
    const typo = await bootError(QueueModule.forRoot({ connection: bed.redis.url, sweeper: { intervalMS: 5 } as never }));
    expect(typo).toBeInstanceOf(RelqConfigError);
    expect(typo.message).toMatch(/forRoot\(\) options: sweeper: unknown option 'intervalMS'/);
    const topLevel = await bootError(QueueModule.forRoot({ connection: bed.redis.url, sweepr: {} } as never));
    expect(topLevel.message).toMatch(/^relq: QueueModule\.forRoot\(\) options: unknown option 'sweepr' \(known: /);
    expect(topLevel.message).not.toMatch(/options: options:/);

    const badUrl = await bootError(QueueModule.forRoot({ connection: 'localhost:6379' }));
    expect(badUrl.message).toMatch(/connection: must be a redis:\/\/ or rediss:\/\/ URL/);

    const badQueue = await bootError(
      QueueModule.forRoot({ connection: bed.redis.url }),
      QueueModule.registerQueue({ name: 'q', defaults: { job: { attempts: 0 } } }),
    );
    expect(badQueue).toBeInstanceOf(RelqConfigError);
    expect(badQueue.message).toMatch(/registerQueue\('q'\): defaults\.job\.attempts: must be between 1/);
    // The root's job policy is checked at forRoot, with its path, even before any queue uses it.
    const badRootPolicy = await bootError(QueueModule.forRoot({ connection: bed.redis.url, defaults: { job: { attempts: 0 } } }));
    expect(badRootPolicy.message).toMatch(/forRoot\(\) options: defaults\.job\.attempts: must be between 1/);
    const badKeep = await bootError(
      QueueModule.forRoot({ connection: bed.redis.url }),
      QueueModule.registerQueue({ name: 'q', defaults: { job: { keepDead: { count: 0 } } } }),
    );
    expect(badKeep.message).toMatch(/registerQueue\('q'\): defaults\.job\.keepDead\.count: must be at least 1/);

    @Processor('p', { concurrency: 0 })
    class BadProcessor {
      @Process()
      run(): void {}
    }
    @Module({ imports: [QueueModule.registerQueue({ name: 'p' })], providers: [BadProcessor] })
    class M1 {}
    expect((await bootError(QueueModule.forRoot({ connection: bed.redis.url }), M1)).message).toMatch(
      /@Processor\('p'\) BadProcessor: concurrency: must be between 1 and 1000, got 0/,
    );

    @Processor('h', { concurrency: 2 })
    class TooWide {
      @Process({ concurrency: 5 })
      run(): void {}
    }
    @Module({ imports: [QueueModule.registerQueue({ name: 'h' })], providers: [TooWide] })
    class M2 {}
    expect((await bootError(QueueModule.forRoot({ connection: bed.redis.url }), M2)).message).toMatch(
      /TooWide\.run has concurrency 5, above the processor's concurrency 2/,
    );

    @Processor('none')
    class NoHandler {}
    @Module({ imports: [QueueModule.registerQueue({ name: 'none' })], providers: [NoHandler] })
    class M3 {}
    expect((await bootError(QueueModule.forRoot({ connection: bed.redis.url }), M3)).message).toMatch(/no @Process\(\) method/);

    expect(() => QueueModule.forRootAsync({})).toThrow(/exactly one of useFactory, useClass or useExisting/);
  });

  test('registerQueue without forRoot, and one queue registered twice with different options', async () => {
    const noRoot = await bootError(QueueModule.registerQueue({ name: 'lonely' }));
    expect(noRoot.message).toMatch(/registerQueue\('lonely'\) needs QueueModule\.forRoot\(\)/);

    @Module({ imports: [QueueModule.registerQueue({ name: 'twice', maxPayloadBytes: 1000 })] })
    class A {}
    @Module({ imports: [QueueModule.registerQueue({ name: 'twice', maxPayloadBytes: 2000 })] })
    class B {}
    const twice = await bootError(QueueModule.forRoot({ connection: bed.redis.url }), A, B);
    expect(twice.message).toMatch(/queue 'twice' is registered more than once with different options/);
  });
});

test('the bootstrap leaves no connection open when it fails early (jest would not exit otherwise)', async () => {
  // Covered by the suite exiting on its own; this checks compile() errors close too.
  await expect(Test.createTestingModule({ imports: [QueueModule.forRoot({ prefix: 'a:b' })] }).compile()).rejects.toThrow(
    /prefix: must not contain ':'/,
  );
});

test('tests may override a queue provider with a mock; its processor is then skipped, not an error', async () => {
  const mock = { add: async () => ({ id: 'mock-1', created: true }) };
  const moduleRef = await Test.createTestingModule({
    imports: [QueueModule.forRoot({ connection: bed.redis.url, prefix: uniquePrefix() }), PingModule],
  })
    .overrideProvider(getQueueToken('pings'))
    .useValue(mock)
    .compile();
  moduleRef.useLogger(false);
  await moduleRef.init();
  apps.push(moduleRef);
  expect(moduleRef.get(PingProducer).queue).toBe(mock);
  expect(moduleRef.get(QueueRegistry).getProcessors()).toEqual([]);
});
