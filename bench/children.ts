/**
 * The bench's child processes (entry: bench/child.ts) and what they are asked over IPC. Each
 * is a guarded process group (tools/process-guard.ts): `stopChildren` ends it, the exit of
 * this process SIGKILLs it (errors and SIGINT end the run with process.exit), and its
 * watchdog does if this process dies without an exit hook.
 */
import { fileURLToPath } from 'node:url';
import { killGroup, spawnGuarded, type GuardedProcess } from '../tools/process-guard.js';
import type { Conn, LibName } from './adapters.js';

export type ChildRequest =
  /** Start one worker of `lib`; completions are reported as 'progress' until 'stop'. */
  | { cmd: 'consume'; lib: LibName; conn: Conn; concurrency: number }
  | { cmd: 'stop' }
  /** Add `count` jobs at `rate`/s, each stamped with clockMs(), at most `maxInFlight` unanswered. */
  | { cmd: 'produce'; lib: LibName; conn: Conn; from: number; count: number; rate: number; maxInFlight: number }
  /** Add as fast as at most `maxInFlight` unanswered adds allow, each stamped with clockMs(), until 'halt'. */
  | { cmd: 'flood'; lib: LibName; conn: Conn; from: number; maxInFlight: number }
  | { cmd: 'halt' };

export type ChildReply =
  | { type: 'ready' }
  | { type: 'consuming' }
  /** Completions so far of the running worker. */
  | { type: 'progress'; count: number }
  /** The stopped worker's completions, its first handler start and last completion (clockMs()), and the child's CPU meanwhile. */
  | { type: 'stopped'; count: number; firstStart: number; lastDone: number; cpuUs: number }
  | { type: 'produced'; sentMs: number }
  /** The producer is connected and adding. */
  | { type: 'flooding' }
  /** The jobs the flood added and its sending time, every add answered. */
  | { type: 'halted'; count: number; sentMs: number }
  | { type: 'error'; message: string };

type ReplyOf<T extends ChildReply['type']> = Extract<ChildReply, { type: T }>;

const ENTRY = fileURLToPath(new URL('./child.js', import.meta.url));
const live = new Set<GuardedProcess>();
let exitHookInstalled = false;

function killLiveNow(): void {
  for (const g of live) if (g.child.pid) killGroup(g.child.pid, 'SIGKILL');
}

export class BenchChild {
  private constructor(private readonly guarded: GuardedProcess) {}

  static async start(): Promise<BenchChild> {
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on('exit', killLiveNow);
    }
    const guarded = spawnGuarded(process.execPath, [ENTRY], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    live.add(guarded);
    const child = new BenchChild(guarded);
    try {
      await child.reply('ready', 60_000);
    } catch (err) {
      await child.stop();
      throw err;
    }
    return child;
  }

  get pid(): number | undefined {
    return this.guarded.child.pid;
  }

  /** Sends `req` and resolves with the reply of `type`; rejects on the child's error or exit, or after `timeoutMs`. */
  request<T extends ChildReply['type']>(req: ChildRequest, type: T, timeoutMs = 120_000): Promise<ReplyOf<T>> {
    const replied = this.reply(type, timeoutMs);
    this.guarded.child.send(req);
    return replied;
  }

  /** Calls `f` with each progress report until the returned function is called. */
  onProgress(f: (count: number) => void): () => void {
    const onMessage = (m: ChildReply) => {
      if (m.type === 'progress') f(m.count);
    };
    this.guarded.child.on('message', onMessage);
    return () => this.guarded.child.off('message', onMessage);
  }

  async stop(): Promise<void> {
    await this.guarded.stop('SIGTERM', 2000);
    live.delete(this.guarded);
  }

  private reply<T extends ChildReply['type']>(type: T, timeoutMs: number): Promise<ReplyOf<T>> {
    const child = this.guarded.child;
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      const onMessage = (m: ChildReply) => {
        if (m.type === type) {
          done();
          resolve(m as ReplyOf<T>);
        } else if (m.type === 'error') {
          done();
          reject(new Error(`bench child ${child.pid}: ${m.message}`));
        }
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        done();
        reject(new Error(`bench child ${child.pid} exited (${code ?? signal}) before '${type}'`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`bench child ${child.pid}: no '${type}' after ${timeoutMs} ms`));
      }, timeoutMs);
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  }
}

/** Starts `n` children and waits until each is ready; stops them all if one fails. */
export async function startChildren(n: number): Promise<BenchChild[]> {
  const started = await Promise.allSettled(Array.from({ length: n }, () => BenchChild.start()));
  const children = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await stopChildren(children);
    throw failed.reason;
  }
  return children;
}

export async function stopChildren(children: readonly BenchChild[]): Promise<void> {
  await Promise.all(children.map((c) => c.stop()));
}

/** The pids of the children running now (their CPU is the bench's own, not foreign load). */
export function childPids(): number[] {
  return [...live].flatMap((g) => (g.child.pid ? [g.child.pid] : []));
}
