/**
 * The entry of the bench's child processes (bench/children.ts starts them): one library's
 * worker or producer at a time, as the parent asks over the IPC channel; a flood of adds runs
 * until the parent halts it. A consumer counts its completions and reports them every
 * PROGRESS_MS; times are clockMs(), which the parent reads on the same clock.
 */
import { ADAPTERS, type Consumer } from './adapters.js';
import type { ChildReply, ChildRequest } from './children.js';
import { addAtRate, addUntil, clockMs, cpuUs } from './scenarios/kit.js';

const PROGRESS_MS = 10;

function send(reply: ChildReply): void {
  process.send!(reply);
}

interface Running {
  consumer: Consumer;
  timer: NodeJS.Timeout;
  cpu0: number;
  tally: { count: number; firstStart: number; lastDone: number };
}
let running: Running | undefined;

interface Flooding {
  halt(): void;
  done: Promise<{ count: number; sentMs: number }>;
}
let flooding: Flooding | undefined;

async function handle(req: ChildRequest): Promise<ChildReply> {
  switch (req.cmd) {
    case 'consume': {
      const tally = { count: 0, firstStart: 0, lastDone: 0 };
      const cpu0 = cpuUs();
      const consumer = await ADAPTERS[req.lib].consumer(req.conn, req.concurrency, {
        onStart: () => {
          if (tally.firstStart === 0) tally.firstStart = clockMs();
        },
        onDone: () => {
          tally.count += 1;
          tally.lastDone = clockMs();
        },
      });
      let reported = 0;
      const timer = setInterval(() => {
        if (tally.count === reported) return;
        reported = tally.count;
        send({ type: 'progress', count: reported });
      }, PROGRESS_MS);
      running = { consumer, timer, cpu0, tally };
      return { type: 'consuming' };
    }
    case 'stop': {
      if (!running) throw new Error('stop: no consumer running');
      const { consumer, timer, cpu0, tally } = running;
      const cpu = cpuUs() - cpu0;
      running = undefined;
      clearInterval(timer);
      await consumer.close();
      return { type: 'stopped', ...tally, cpuUs: cpu };
    }
    case 'produce': {
      const p = await ADAPTERS[req.lib].producer(req.conn);
      try {
        const sentMs = await addAtRate(p, req.from, req.count, req.rate, clockMs, req.maxInFlight);
        return { type: 'produced', sentMs };
      } finally {
        await p.close();
      }
    }
    case 'flood': {
      if (flooding) throw new Error('flood: already flooding');
      const p = await ADAPTERS[req.lib].producer(req.conn);
      let halted = false;
      const done = addUntil(p, req.from, () => halted, clockMs, req.maxInFlight).finally(() => p.close());
      // a failed add is reported at 'halt'
      done.catch(() => undefined);
      flooding = {
        halt: () => {
          halted = true;
        },
        done,
      };
      return { type: 'flooding' };
    }
    case 'halt': {
      if (!flooding) throw new Error('halt: not flooding');
      const { halt, done } = flooding;
      flooding = undefined;
      halt();
      return { type: 'halted', ...(await done) };
    }
  }
}

process.on('message', (req: ChildRequest) => {
  handle(req).then(send, (err: unknown) => send({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) }));
});
// the parent gone, nothing is left to do here
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
