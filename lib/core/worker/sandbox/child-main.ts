/*
 * What runs in a sandbox's child (a worker thread, or a process started with `node -e`). It is
 * sent there as the source text of these functions (childSource()), not as a module file:
 * so it runs the same from the built package, from a bundle and from TypeScript sources
 * (a child cannot load those), with no file to find next to this one. That is why
 * childMain() refers to nothing outside itself but its arguments and Node's globals.
 */
import type { FromChild, JobMethod, PackedThrown, SandboxJobFields, ToChild } from './messages.js';
import { packThrown, revivePlain } from './errors.js';

interface ChildConfig {
  kind: 'thread' | 'process';
  /** The handler file's URL. */
  file: string;
}

type Handler = (job: object) => unknown;

/** The child: loads the handler file, says 'ready', then runs one job at a time as the worker asks. */
export function childMain(cfg: ChildConfig, pack: (value: unknown) => PackedThrown, revive: (packed: PackedThrown) => unknown): void {
  const port = cfg.kind === 'thread' ? (require('node:worker_threads') as typeof import('node:worker_threads')).parentPort : null;
  const send = (m: FromChild): void => {
    if (port) port.postMessage(m);
    else process.send!(m);
  };
  const calls = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  const controllers = new Map<number, AbortController>();
  let lastCall = 0;
  if (!port) {
    process.title = 'relq sandbox';
    process.on('disconnect', () => process.exit(0)); // the worker's process is gone
    // A Ctrl+C reaches the whole process group: the worker, draining, decides when its children end.
    process.on('SIGINT', () => undefined);
    // Said before the process ends, so that the attempt fails with what was thrown.
    process.on('uncaughtException', (error) => process.send!({ t: 'crashed', error: pack(error) } satisfies FromChild, () => process.exit(1)));
  }

  const call = (run: number, method: JobMethod, args: unknown[]): Promise<unknown> =>
    new Promise((resolve, reject) => {
      lastCall += 1;
      calls.set(lastCall, { resolve, reject });
      send({ t: 'call', run, call: lastCall, method, args });
    });

  const jobOf = (run: number, fields: SandboxJobFields, signal: AbortSignal): object => {
    const job = {
      ...fields,
      signal,
      touch: (extendMs?: number) => call(run, 'touch', [extendMs]),
      updateProgress: (progress: unknown) => call(run, 'updateProgress', [progress]),
      log: (line: unknown) => call(run, 'log', [line]),
      updateData: async (data: unknown) => {
        const written = await call(run, 'updateData', [data]);
        if (written === true) job.data = data;
        return written;
      },
      moveToDelayed: (runAt: unknown) => call(run, 'moveToDelayed', [runAt]),
      snooze: (delayMs: unknown) => call(run, 'snooze', [delayMs]),
      childrenResults: () => call(run, 'childrenResults', []),
      addChildren: (children: unknown, opts?: unknown) => call(run, 'addChildren', [children, opts]),
      waitForChildren: () => call(run, 'waitForChildren', []),
      // relq's error classes are not loaded here: their name and code say what they are
      reject: (reason = 'rejected'): never => {
        throw Object.assign(new Error(reason), { name: 'UnrecoverableError', code: 'RELQ_UNRECOVERABLE' });
      },
      rateLimit: (delayMs: number, opts: { scope?: 'auto' | 'queue' } = {}): never => {
        throw Object.assign(new Error(`rate limited for ${delayMs} ms`), { name: 'RateLimitError', code: 'RELQ_RATE_LIMITED', delayMs, scope: opts.scope ?? 'auto' });
      },
    };
    return job;
  };

  const runJob = async (handler: Handler, run: number, fields: SandboxJobFields): Promise<void> => {
    const controller = new AbortController();
    controllers.set(run, controller);
    try {
      const result = await handler(jobOf(run, fields, controller.signal));
      try {
        send({ t: 'done', run, result });
      } catch (error) {
        send({ t: 'failed', run, error: pack(error) }); // a result that does not clone
      }
    } catch (error) {
      send({ t: 'failed', run, error: pack(error) });
    } finally {
      controllers.delete(run);
    }
  };

  const onMessage = (handler: Handler, m: ToChild): void => {
    if (m.t === 'run') void runJob(handler, m.run, m.job);
    else if (m.t === 'abort') controllers.get(m.run)?.abort(revive(m.reason));
    else {
      const waiting = calls.get(m.call);
      calls.delete(m.call);
      if (m.ok) waiting?.resolve(m.value);
      else waiting?.reject(revive(m.error));
    }
  };

  import(cfg.file).then(
    (mod: { default?: unknown }) => {
      const top = mod.default as { default?: unknown } | undefined;
      // `export default`, or a CommonJS module whose exports are the function or hold it as `default`
      const handler = typeof top === 'function' ? top : typeof top?.default === 'function' ? top.default : undefined;
      if (typeof handler !== 'function') {
        send({ t: 'unusable', error: pack(new TypeError(`${cfg.file} exports no handler function (export default async (job) => ...)`)) });
        return;
      }
      const listener = (m: unknown) => onMessage(handler as Handler, m as ToChild);
      if (port) port.on('message', listener);
      else process.on('message', listener);
      send({ t: 'ready' });
    },
    (error: unknown) => send({ t: 'unusable', error: pack(error) }),
  );
}

/** The source a child runs: childMain() and the packing of errors it uses, as text. */
export function childSource(cfg: ChildConfig): string {
  return `(${childMain.toString()})(${JSON.stringify(cfg)}, ${packThrown.toString()}, ${revivePlain.toString()});`;
}
