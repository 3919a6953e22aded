/**
 * The entry of the bench's child processes (bench/children.ts starts them): one library's
 * worker or producer at a time, as the parent asks over the IPC channel. A consumer counts
 * its completions and reports them every PROGRESS_MS; times are clockMs(), which the parent
 * reads on the same clock.
 */
import { ADAPTERS, type Consumer } from './adapters.js';
import type { ChildReply, ChildRequest } from './children.js';
import { addAtRate, clockMs, cpuUs } from './scenarios/kit.js';

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
  }
}

process.on('message', (req: ChildRequest) => {
  handle(req).then(send, (err: unknown) => send({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) }));
});
// the parent gone, nothing is left to do here
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
