/**
 * Launchers the tests and tools start (`npm run sample`, `npm run bench`) as guarded process
 * groups. The watchdog and the process primitives are those of relq/testing's private Redis
 * (lib/testing/watchdog.ts, shipped for `startTestRedis()`); this file adds what only the
 * repository's own tests and tools need.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { isRunning, killGroup, startWatchdog, stopWatchdog, waitForExit } from '../lib/testing/watchdog.js';

// the one primitive a caller (test/sample) takes from here besides spawnGuarded
export { killGroup };

export interface GuardedProcess {
  child: ChildProcess;
  /**
   * Sends `signal` (default SIGTERM) to the child, waits up to `graceMs` (default 10 s) for it
   * to exit, then SIGKILLs its whole process group (whatever is left of it) and stops the
   * watchdog. Idempotent; call it in afterAll and on failure.
   */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

/**
 * Spawns `command` as the leader of a new process group, guarded by a watchdog that SIGKILLs
 * the group once this process is gone. For launchers that tests start (`npm run sample`,
 * `npm run bench`): a failing or timed-out test, or a dying test runner, leaves nothing behind.
 */
export function spawnGuarded(command: string, args: string[], options: SpawnOptions = {}): GuardedProcess {
  const child = spawn(command, args, { ...options, detached: true });
  child.on('error', () => {});
  const watchdog = child.pid ? startWatchdog({ pid: child.pid, group: true }) : undefined;
  let stopping: Promise<void> | undefined;
  return {
    child,
    stop(signal = 'SIGTERM', graceMs = 10_000) {
      stopping ??= (async () => {
        if (child.pid && isRunning(child)) {
          child.kill(signal);
          await waitForExit(child, graceMs);
        }
        if (child.pid) killGroup(child.pid, 'SIGKILL');
        await waitForExit(child, 2000);
        stopWatchdog(watchdog);
      })();
      return stopping;
    },
  };
}
