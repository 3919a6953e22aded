/**
 * QueueRegistry's controls of a processor's lease loop at run time: setConcurrency (used at
 * once), pauseWorkers / resumeWorkers (this app only), both kept when the loop is stopped and
 * started again.
 */
import { Module } from '@nestjs/common';
import { ValidationError } from '../../lib/index.js';
import { InjectQueue, Process, Processor, Queue, QueueModule, QueueRegistry, RelqConfigError } from '../../lib/nest/index.js';
import { uniquePrefix } from '../support/redis.js';
import { waitUntil, within } from '../support/engine-harness.js';
import { useApps } from './app-bed.js';

const bed = useApps();

/** Holds the handlers until released. */
const gate = {
  running: 0,
  started: 0,
  open: false,
  waiting: [] as Array<() => void>,
  release(): void {
    this.open = true;
    for (const go of this.waiting.splice(0)) go();
  },
  reset(): void {
    Object.assign(this, { running: 0, started: 0, open: false, waiting: [] });
  },
};

@Processor('controls', { concurrency: 1, blockMs: 30_000 })
class ControlsProcessor {
  constructor(@InjectQueue('controls') readonly queue: Queue) {}

  @Process()
  async run(): Promise<void> {
    gate.started += 1;
    gate.running += 1;
    if (!gate.open) await new Promise<void>((resolve) => gate.waiting.push(resolve));
    gate.running -= 1;
  }
}

@Module({ imports: [QueueModule.registerQueue({ name: 'controls' })], providers: [ControlsProcessor] })
class ControlsModule {}

async function startControls() {
  gate.reset();
  const app = await bed.start(QueueModule.forRoot({ connection: bed.redis.url, prefix: uniquePrefix() }), ControlsModule);
  return { registry: app.get(QueueRegistry), queue: app.get(ControlsProcessor).queue };
}

test('setConcurrency: used at once, checked first, kept across stop and start', async () => {
  const { registry, queue } = await startControls();
  for (let i = 0; i < 8; i++) await queue.add({});
  await waitUntil(() => gate.running === 1, 'one running');
  expect(registry.setConcurrency('controls', 4)).toBe(1);
  await waitUntil(() => gate.running === 4, 'four running after the raise', 2000);
  expect(registry.getProcessors()[0]).toMatchObject({ concurrency: 4, state: 'busy', inFlight: 4 });

  expect(() => registry.setConcurrency('controls', 0)).toThrow(ValidationError);
  expect(() => registry.setConcurrency('nowhere', 2)).toThrow(RelqConfigError);
  expect(registry.getProcessors()[0]!.concurrency).toBe(4);

  expect(registry.setConcurrency('controls', 2)).toBe(1);
  await registry.stopWorkers('controls', { drainTimeoutMs: 0 });
  gate.running = 0;
  await registry.startWorkers('controls');
  await waitUntil(() => gate.running === 2, 'the restarted loop runs two at once', 2000);
  expect(registry.getProcessors()[0]!.concurrency).toBe(2);
  gate.release();
  await waitUntil(async () => (await queue.counts()).completed === 8, 'all completed');
});

test('pauseWorkers / resumeWorkers: running jobs finish, nothing more is leased until resumed', async () => {
  const { registry, queue } = await startControls();
  registry.setConcurrency('controls', 2);
  for (let i = 0; i < 6; i++) await queue.add({});
  await waitUntil(() => gate.running === 2, 'two running');
  expect(await within(registry.pauseWorkers('controls'), 2000, 'pauseWorkers')).toBe(1);
  expect(registry.getProcessors()[0]).toMatchObject({ state: 'paused', paused: true, alive: true });
  const startedAtPause = gate.started;
  gate.release();
  await waitUntil(async () => (await queue.counts()).completed === 2, 'the running jobs completed while paused');
  expect(await queue.counts()).toMatchObject({ working: 0, pending: 4 });
  expect(gate.started).toBe(startedAtPause);

  // a loop stopped and started again stays paused
  await registry.stopWorkers('controls');
  await registry.startWorkers('controls');
  await within(registry.pauseWorkers('controls', { drain: true }), 2000, 'pauseWorkers({ drain: true })');
  expect(registry.getProcessors()[0]).toMatchObject({ state: 'paused', paused: true });
  expect(gate.started).toBe(startedAtPause);

  expect(registry.resumeWorkers('controls')).toBe(1);
  await waitUntil(async () => (await queue.counts()).completed === 6, 'the rest completed after resume', 2000);
  expect(registry.getProcessors()[0]!.paused).toBe(false);
});
