/**
 * A Nest processor with a handler file: `@Processor(queue, { file, sandbox })` runs every job
 * of its queue in the file's children, and its `@OnWorkerEvent()` methods get the outcomes.
 */
import { Module } from '@nestjs/common';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { OnWorkerEvent, Process, Processor, QueueModule, QueueRegistry, RelqConfigError, type LeasedJob } from '../../lib/nest/index.js';
import { uniquePrefix } from '../support/redis.js';
import { useApps, waitFor } from '../nest/app-bed.js';

const HANDLER = pathToFileURL(join(process.cwd(), 'test', 'sandbox', 'fixtures', 'handler.mjs'));
const bed = useApps();

function root() {
  return QueueModule.forRoot({
    connection: bed.redis.url,
    prefix: uniquePrefix(),
    defaults: { processor: { blockMs: 200 } },
    shutdown: { drainTimeoutMs: 200 },
  });
}

test('@Processor({ file, sandbox }) runs the jobs in child processes; its listeners get the events', async () => {
  const completed: Array<{ id: string; result: { pid: number } }> = [];

  @Processor('sandboxed', { file: HANDLER, sandbox: { kind: 'process' }, concurrency: 2 })
  class SandboxedProcessor {
    @OnWorkerEvent('completed')
    done(job: LeasedJob<number>, result: { pid: number }): void {
      completed.push({ id: job.id, result });
    }
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'sandboxed' })], providers: [SandboxedProcessor] })
  class SandboxedModule {}

  const app = await start(SandboxedModule);
  const registry = app.get(QueueRegistry);
  const queue = registry.getQueue<number, { pid: number; data: number }>('sandboxed');
  const added = await queue.addBulk([1, 2, 3].map((data) => ({ data, opts: { name: 'echo' } })));
  for (const { id } of added) {
    const result = await queue.waitForResult(id, { timeoutMs: 15_000 });
    expect(result?.pid).not.toBe(process.pid);
  }
  await waitFor(() => completed.length === 3, 10_000, 'three completed events');
  expect(registry.getProcessors()).toMatchObject([{ processor: 'SandboxedProcessor', concurrency: 2, handlers: [] }]);
}, 40_000);

test('a processor with a handler file and a @Process() method is refused at startup', async () => {
  @Processor('both', { file: HANDLER })
  class BothProcessor {
    @Process()
    handle(): string {
      return 'never';
    }
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'both' })], providers: [BothProcessor] })
  class BothModule {}

  await expect(start(BothModule)).rejects.toThrow(RelqConfigError);
  await expect(start(BothModule)).rejects.toThrow(/BothProcessor\.handle would never run/);
});

test('sandbox options without a file, and a bad file, are refused at startup', async () => {
  @Processor('no-file', { sandbox: { kind: 'thread' } })
  class NoFileProcessor {
    @Process()
    handle(): string {
      return 'x';
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'no-file' })], providers: [NoFileProcessor] })
  class NoFileModule {}
  await expect(start(NoFileModule)).rejects.toThrow(/sandbox: applies to a handler file: give `file` too/);

  @Processor('bad-file', { file: 'relative.mjs' })
  class BadFileProcessor {}
  @Module({ imports: [QueueModule.registerQueue({ name: 'bad-file' })], providers: [BadFileProcessor] })
  class BadFileModule {}
  await expect(start(BadFileModule)).rejects.toThrow(/file: must be an absolute path or a file: URL/);
});

function start(feature: Function) {
  return bed.start(root(), feature as never);
}
