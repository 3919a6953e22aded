/**
 * Running the relq CLI as users do: lib/ transpiled once into `.tmp/`
 * (tools/transpile.mjs: no type check, well under a second; `dist/` may be stale) and the
 * built main.js run with plain Node as a child process. Every child is killed by stopAll().
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { libSources, transpileTree } from '../../tools/transpile.mjs';

const ROOT = process.cwd();

/** A port on 127.0.0.1 with nothing listening (taken from the OS, then freed). */
export function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunningCli {
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  done: Promise<CliRun>;
}

/** The CLI built once per spec file; `stopAll()` in afterAll kills what still runs and removes the build. */
export class CliHarness {
  private dir: string | undefined;
  private readonly running = new Set<ChildProcess>();

  /** Transpiles lib/ into .tmp/cli-<random>/, the layout of dist/ (lib/cli/main.js next to lib/index.js). */
  build(): void {
    const top = join(ROOT, '.tmp', `cli-${randomBytes(4).toString('hex')}`);
    transpileTree(ROOT, libSources(ROOT), top);
    this.dir = top;
  }

  /** Starts `node main.js ...args` with `env` on top of this process's (REDIS_URL removed unless given). */
  start(args: string[], env: Record<string, string> = {}): RunningCli {
    return this.spawnTracked(process.execPath, [this.mainPath(), ...args], env);
  }

  private mainPath(): string {
    if (!this.dir) throw new Error('CliHarness.build() first');
    return join(this.dir, 'lib', 'cli', 'main.js');
  }

  private spawnTracked(command: string, args: string[], env: Record<string, string>): RunningCli {
    const { REDIS_URL: _ignored, ...base } = process.env;
    const proc = spawn(command, args, { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.running.add(proc);
    let out = '';
    let err = '';
    proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const done = new Promise<CliRun>((resolve) =>
      proc.on('close', (code, signal) => {
        this.running.delete(proc);
        resolve({ code, signal, stdout: out, stderr: err });
      }),
    );
    return { proc, stdout: () => out, stderr: () => err, done };
  }

  /** Runs the CLI to its end. */
  run(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
    return this.start(args, env).done;
  }

  /**
   * Runs the CLI to its end on a pseudo-terminal (util-linux `script`), as from a shell:
   * stdout and stderr both go to the terminal, so both arrive in `stdout`.
   */
  runInTerminal(args: string[]): Promise<CliRun> {
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const line = [process.execPath, this.mainPath(), ...args].map(quote).join(' ');
    return this.spawnTracked('script', ['-qec', line, '/dev/null'], {}).done;
  }

  /** Kills what still runs and removes the build. */
  async stopAll(): Promise<void> {
    const left = [...this.running];
    await Promise.all(
      left.map(
        (p) =>
          new Promise<void>((resolve) => {
            p.once('close', () => resolve());
            p.kill('SIGKILL');
          }),
      ),
    );
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}
