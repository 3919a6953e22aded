/**
 * Running the real engine in child processes (several producers in several processes, a
 * process SIGKILLed while it holds leases or a role).
 *
 * A child cannot load TypeScript (Node 20 has no type stripping), and `dist/` may be stale.
 * So `buildEngine()` transpiles lib/ (tools/transpile.mjs: no type check, well under a
 * second) into a fresh directory under `.tmp/` (git-ignored) inside the repository, where
 * Node's resolution still finds node_modules.
 * Children are small .mjs fixtures that `import()` the built engine from RELQ_ENGINE and talk
 * to the test over the IPC channel (`process.send`).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { libSources, transpileTree } from '../../tools/transpile.mjs';

const ROOT = process.cwd();

export interface BuiltEngine {
  /** Directory holding index.js (the public API of lib/index.ts), core/, nest/ and scripts/. */
  dir: string;
  /** Where `extra` files went: the built tree mirrors the repository (`<root>/test/...`). */
  root: string;
  /** Removes the directory. */
  remove(): void;
}

/**
 * Transpiles the library (and `extra` TypeScript files of the repository, e.g. a Nest fixture
 * that imports it by relative path) into `.tmp/engine-<random>/`.
 */
export function buildEngine(extra: string[] = []): BuiltEngine {
  const top = join(ROOT, '.tmp', `engine-${randomBytes(4).toString('hex')}`);
  transpileTree(ROOT, [...libSources(ROOT), ...extra.map((f) => join(ROOT, f))], top);
  return { dir: join(top, 'lib'), root: top, remove: () => rmSync(top, { recursive: true, force: true }) };
}

export interface EngineChild {
  proc: ChildProcess;
  /** Messages received so far. */
  messages: any[];
  /** Resolves with the first message for which `match` holds (seen before or after the call). */
  waitFor(match: (m: any) => boolean, timeoutMs?: number): Promise<any>;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Forks `fixture` (an .mjs file) with the built engine and `env`; stderr is passed through. */
export function forkChild(engine: BuiltEngine, fixture: string, env: Record<string, string | number>): EngineChild {
  const proc = fork(fixture, [], {
    env: { ...process.env, RELQ_ENGINE: engine.dir, ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)])) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const messages: any[] = [];
  const listeners = new Set<() => void>();
  proc.on('message', (m) => {
    messages.push(m);
    for (const l of [...listeners]) l();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.on('exit', (code, signal) => {
      resolve({ code, signal });
      for (const l of [...listeners]) l();
    });
  });
  return {
    proc,
    messages,
    exited,
    waitFor(match, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const m = messages.find(match);
          if (m !== undefined) {
            cleanup();
            resolve(m);
          } else if (proc.exitCode !== null || proc.signalCode !== null) {
            cleanup();
            reject(new Error(`child ${fixture} exited (${proc.exitCode ?? proc.signalCode}) before the awaited message`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`child ${fixture}: no awaited message within ${timeoutMs} ms (got ${JSON.stringify(messages).slice(0, 300)})`));
        }, timeoutMs);
        const cleanup = (): void => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    async kill(signal = 'SIGKILL') {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill(signal);
        await exited;
      }
    },
  };
}

export interface EngineChildren {
  /** Children forked in the current test; all are killed after it. */
  readonly children: EngineChild[];
  fork(fixture: string, env: Record<string, string | number>): EngineChild;
}

/** Builds the engine once for the spec file and kills every forked child after each test. */
export function useEngineChildren(): EngineChildren {
  let engine: BuiltEngine | undefined;
  const children: EngineChild[] = [];
  beforeAll(() => {
    engine = buildEngine();
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.kill()));
  });
  afterAll(() => engine?.remove());
  return {
    children,
    fork(fixture, env) {
      const child = forkChild(engine!, fixture, env);
      children.push(child);
      return child;
    },
  };
}
