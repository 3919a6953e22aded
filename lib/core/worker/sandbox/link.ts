import { spawn } from 'node:child_process';
import { Worker as Thread } from 'node:worker_threads';
import type { SandboxSettings } from './options.js';
import type { FromChild, PackedThrown, ToChild } from './messages.js';
import { adopt } from './adopt.js';
import { reviveThrown } from './errors.js';

/** A started child, thread or process: what the pool needs of either. */
export interface ChildLink {
  /** Sends to the child; dropped once it has ended. */
  send(m: ToChild): void;
  /** Ends the child now, whatever it runs (a blocked event loop too). */
  kill(): void;
}

export interface LinkEvents {
  message(m: FromChild): void;
  /** Once, when the child has ended: why (`... exited with code 1`), and the error it ended with, if known. */
  exit(why: string, cause: unknown): void;
}

/** Starts a child running `source` (child-main.ts): a worker thread or a process, per `s.kind`. */
export function startChild(s: SandboxSettings, source: string, on: LinkEvents): ChildLink {
  return s.kind === 'thread' ? startThread(s, source, on) : startProcess(s, source, on);
}

function startThread(s: SandboxSettings, source: string, on: LinkEvents): ChildLink {
  const thread = new Thread(source, {
    eval: true,
    ...(s.execArgv && { execArgv: s.execArgv }),
    ...(s.maxMemoryMb !== undefined && { resourceLimits: { maxOldGenerationSizeMb: s.maxMemoryMb } }),
  });
  thread.unref(); // the worker's own connections keep the process alive while it runs
  let error: unknown;
  thread.on('message', (m: FromChild) => on.message(m));
  thread.on('error', (e) => (error = e));
  thread.on('exit', (code) => {
    if (error === undefined) on.exit(`exited with code ${code}`, undefined);
    else if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') on.exit('ran out of memory (maxMemoryMb)', error);
    else on.exit('threw outside the handler', error);
  });
  return {
    send: (m) => thread.postMessage(m),
    kill: () => void thread.terminate(),
  };
}

function startProcess(s: SandboxSettings, source: string, on: LinkEvents): ChildLink {
  const args = [...(s.execArgv ?? []), ...(s.maxMemoryMb !== undefined ? [`--max-old-space-size=${s.maxMemoryMb}`] : []), '-e', source];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
  child.unref();
  child.channel?.unref();
  let crashed: unknown;
  let ended = false;
  const end = (why: string, cause: unknown): void => {
    if (ended) return;
    ended = true;
    on.exit(why, cause);
  };
  child.on('message', (m: FromChild) => {
    if (m.t === 'crashed') crashed = reviveThrown(adopt(m.error) as PackedThrown);
    else on.message(m);
  });
  child.on('error', (e) => end('could not be started', e)); // spawn failed: no 'exit' may follow
  child.on('exit', (code, signal) => {
    if (crashed !== undefined) end('threw outside the handler', crashed);
    else if (signal === 'SIGABRT' || signal === 'SIGTRAP') end(`was killed by ${signal} (a fatal V8 error, such as running out of memory: maxMemoryMb)`, undefined);
    else end(signal ? `was killed by ${signal}` : `exited with code ${code}`, undefined);
  });
  return {
    send: (m) => {
      if (child.connected) child.send(m, (e: Error | null) => void e); // a child that just ended: its 'exit' says why
    },
    kill: () => void child.kill('SIGKILL'),
  };
}
