import { SandboxError } from '../../errors.js';
import { messageOf } from '../../thrown.js';
import type { Job } from '../job-view.js';
import type { AddFlowOptions, FlowJob } from '../../flows/types.js';
import type { JobProgress } from '../../management/read-types.js';
import { adopt } from './adopt.js';
import { packThrown, reviveThrown } from './errors.js';
import { startChild, type ChildLink } from './link.js';
import type { FromChild, JobMethod, SandboxJobFields } from './messages.js';
import type { SandboxSettings } from './options.js';

/** The job a child runs now, and how its attempt ends. */
interface Running {
  run: number;
  job: Job<unknown>;
  resolve(result: unknown): void;
  reject(error: unknown): void;
  onAbort(): void;
  killTimer?: NodeJS.Timeout;
}

/**
 * One child of a pool, seen from the worker: runs one job at a time, forwards the job's
 * abort and kills the child when it does not end the job in time, and answers the job
 * calls its handler makes (progress, log, data, ...) with the worker's JobView.
 */
export class SandboxChild {
  private readonly link: ChildLink;
  private ready = false;
  private dead = false;
  private runs = 0;
  private running: Running | undefined;
  /** The job given before the child was ready: sent once it is. */
  private queued: SandboxJobFields | undefined;
  /** Why it ends, when the worker said so (an unusable handler file): the job fails with it. */
  private unusable: unknown;
  private idleTimer: NodeJS.Timeout | undefined;
  private exitedNow: () => void = () => undefined;
  /** Resolves once the child has ended. */
  readonly exited = new Promise<void>((resolve) => (this.exitedNow = resolve));

  constructor(
    private readonly settings: SandboxSettings,
    source: string,
    /** The child finished its job and can take another. */
    private readonly released: (child: SandboxChild) => void,
    /** The child has ended. */
    private readonly ended: (child: SandboxChild) => void,
  ) {
    this.link = startChild(settings, source, {
      message: (m) => this.onMessage(m),
      exit: (why, cause) => this.onExit(why, cause),
    });
  }

  /** Runs `job` in the child; settles with the handler's result or error, or a SandboxError when the child ends. */
  run(job: Job<unknown>): Promise<unknown> {
    // ended before its first job (a process that could not be started)
    if (this.dead) return Promise.reject(new SandboxError(job.id, `the sandbox ${this.settings.kind} for job ${job.id} ended before it started`));
    this.stopIdleClock();
    this.runs += 1;
    const run = this.runs;
    return new Promise((resolve, reject) => {
      const onAbort = () => this.abort(run, job.signal.reason);
      this.running = { run, job, resolve, reject, onAbort };
      job.signal.addEventListener('abort', onAbort, { once: true });
      const fields = fieldsOf(job);
      if (this.ready) this.link.send({ t: 'run', run, job: fields });
      else this.queued = fields;
      if (job.signal.aborted) onAbort(); // aborted while it waited for this child
    });
  }

  /** Retires the child after `ms` idle, by `retire`. */
  startIdleClock(ms: number, retire: () => void): void {
    this.idleTimer = setTimeout(retire, ms);
    this.idleTimer.unref();
  }

  stopIdleClock(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  kill(): void {
    this.stopIdleClock();
    this.link.kill();
  }


  private abort(run: number, reason: unknown): void {
    const r = this.running;
    if (r?.run !== run) return;
    if (!this.ready) return this.kill(); // the job never reached the child
    this.link.send({ t: 'abort', run, reason: packThrown(reason) });
    r.killTimer = setTimeout(() => this.kill(), this.settings.killAfterMs);
  }

  private onMessage(message: FromChild): void {
    const m = adopt(message) as FromChild;
    switch (m.t) {
      case 'ready':
        this.ready = true;
        if (this.queued && this.running) this.link.send({ t: 'run', run: this.running.run, job: this.queued });
        this.queued = undefined;
        return;
      case 'unusable':
        this.unusable = reviveThrown(m.error);
        this.kill();
        return;
      case 'done':
        return this.finish(m.run, (r) => r.resolve(m.result));
      case 'failed':
        return this.finish(m.run, (r) => r.reject(reviveThrown(m.error)));
      case 'call':
        return this.answer(m.run, m.call, m.method, m.args);
      case 'crashed':
        return; // a process child's: its link gives it with the exit
    }
  }

  private finish(run: number, settle: (r: Running) => void): void {
    const r = this.running;
    if (r?.run !== run) return;
    this.running = undefined;
    this.endRun(r);
    settle(r);
    if (!this.dead) this.released(this);
  }

  private endRun(r: Running): void {
    clearTimeout(r.killTimer);
    r.job.signal.removeEventListener('abort', r.onAbort);
  }

  private answer(run: number, call: number, method: JobMethod, args: unknown[]): void {
    const r = this.running;
    const done =
      r?.run === run ? Promise.resolve().then(() => callJob(r.job, method, args)) : Promise.reject(new Error(`job.${method}(): the attempt that called it has ended`));
    done.then(
      (value) => this.reply(call, value),
      (error: unknown) => this.replyError(call, error),
    );
  }

  private reply(call: number, value: unknown): void {
    if (this.dead) return;
    try {
      this.link.send({ t: 'reply', call, ok: true, value });
    } catch (error) {
      this.replyError(call, error); // a value that does not clone: the child's call throws why
    }
  }

  private replyError(call: number, error: unknown): void {
    if (!this.dead) this.link.send({ t: 'reply', call, ok: false, error: packThrown(error) });
  }

  private onExit(why: string, cause: unknown): void {
    this.dead = true;
    this.stopIdleClock();
    const r = this.running;
    this.running = undefined;
    if (r) {
      this.endRun(r);
      const { id } = r.job;
      if (this.unusable !== undefined) {
        r.reject(new SandboxError(id, `the handler file ${this.settings.file} could not be used: ${messageOf(this.unusable)}`, { cause: this.unusable }));
      } else {
        r.reject(new SandboxError(id, `the sandbox ${this.settings.kind} running job ${id} ${why}`, cause === undefined ? undefined : { cause }));
      }
    }
    this.ended(this);
    this.exitedNow();
  }
}

/** The job's fields, to send to the child. */
function fieldsOf(job: Job<unknown>): SandboxJobFields {
  const f: SandboxJobFields = {
    id: job.id,
    name: job.name,
    data: job.data,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    priority: job.priority,
    requeues: job.requeues,
    createdAt: job.createdAt,
    leasedAt: job.leasedAt,
    policy: job.policy,
    deadline: job.deadline,
  };
  if (job.lastError !== undefined) f.lastError = job.lastError;
  if (job.group !== undefined) f.group = job.group;
  if (job.parent !== undefined) f.parent = job.parent;
  return f;
}

/** A job call of the child's handler, made on the worker's JobView (which checks its arguments). */
function callJob(job: Job<unknown>, method: JobMethod, args: unknown[]): Promise<unknown> {
  switch (method) {
    case 'touch':
      return job.touch(args[0] as number | undefined);
    case 'updateProgress':
      return job.updateProgress(args[0] as JobProgress);
    case 'log':
      return job.log(args[0] as string);
    case 'updateData':
      return job.updateData(args[0]);
    case 'moveToDelayed':
      return job.moveToDelayed(args[0] as number | Date);
    case 'snooze':
      return job.snooze(args[0] as number);
    case 'childrenResults':
      return job.childrenResults();
    case 'addChildren':
      return job.addChildren(args[0] as ReadonlyArray<FlowJob<unknown>>, args[1] as AddFlowOptions | undefined);
    case 'waitForChildren':
      return job.waitForChildren();
  }
}
