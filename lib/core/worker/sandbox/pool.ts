import type { Job } from '../job-view.js';
import { SandboxChild } from './child.js';
import { childSource } from './child-main.js';
import type { SandboxSettings } from './options.js';

/**
 * The children of one sandboxed worker: at most `max()` (the worker's concurrency) at once,
 * started when a job finds none idle, reused job after job, retired after `idleMs` idle (or
 * when the concurrency was lowered), replaced when one ends. A job that finds every child
 * busy waits for one (the worker's slots make this rare: a child whose job was aborted is
 * busy until it ends the job or is killed).
 */
export class SandboxPool<Data, Result> {
  private readonly source: string;
  private readonly children = new Set<SandboxChild>();
  /** Idle children, the most recently used last: reused first, so that the others can retire. */
  private idle: SandboxChild[] = [];
  private waiters: Array<(child: SandboxChild) => void> = [];
  private closed = false;

  constructor(
    private readonly settings: SandboxSettings,
    private readonly max: () => number,
  ) {
    this.source = childSource({ kind: settings.kind, file: settings.file });
  }

  /** The worker's handler: runs the job in a child. */
  readonly run = async (job: Job<Data>): Promise<Result> => {
    const child = await this.acquire(job.signal);
    return (await child.run(job as Job<unknown>)) as Result;
  };

  /** Ends every child now (the worker has given back the jobs they ran); a worker started again starts new ones. */
  async close(): Promise<void> {
    this.closed = true;
    this.idle = [];
    const all = [...this.children];
    for (const child of all) child.kill();
    await Promise.all(all.map((c) => c.exited));
    this.closed = false;
  }

  private acquire(signal: AbortSignal): Promise<SandboxChild> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const idle = this.idle.pop();
    if (idle) {
      idle.stopIdleClock();
      return Promise.resolve(idle);
    }
    if (this.children.size < this.max()) return Promise.resolve(this.start());
    return new Promise((resolve, reject) => {
      const take = (child: SandboxChild) => {
        signal.removeEventListener('abort', onAbort);
        resolve(child);
      };
      const onAbort = () => {
        this.waiters = this.waiters.filter((w) => w !== take);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(take);
    });
  }

  private start(): SandboxChild {
    const child = new SandboxChild(
      this.settings,
      this.source,
      (c) => this.release(c),
      (c) => this.removed(c),
    );
    this.children.add(child);
    return child;
  }

  /** A child finished its job: to the next waiting job, else idle (or retired when over the bound). */
  private release(child: SandboxChild): void {
    if (this.closed) return child.kill();
    const waiter = this.waiters.shift();
    if (waiter) return waiter(child);
    if (this.children.size > this.max()) return child.kill();
    this.idle.push(child);
    child.startIdleClock(this.settings.idleMs, () => {
      this.idle = this.idle.filter((c) => c !== child);
      child.kill();
    });
  }

  /** A child ended: a job waiting for one gets a new child. */
  private removed(child: SandboxChild): void {
    this.children.delete(child);
    this.idle = this.idle.filter((c) => c !== child);
    if (this.closed || this.children.size >= this.max()) return;
    const waiter = this.waiters.shift();
    if (waiter) waiter(this.start());
  }
}
