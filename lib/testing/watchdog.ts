/**
 * Child processes that must not outlive the process that started them: the private
 * redis-servers of `startTestRedis()` (./redis-process.ts), and the launchers the project's
 * own tools and tests start (tools/process-guard.ts builds on this file).
 *
 * Each such child leads its own process group (spawned `detached`), so one group kill also
 * takes whatever it started itself. A watchdog, a tiny detached `sh`, SIGKILLs that group (and
 * removes a temp dir) within about a second after the owner disappears for any reason, even
 * SIGKILL, when no exit hook runs. Not part of relq/testing's exports.
 */
import { spawn, type ChildProcess } from 'node:child_process';

const WATCHDOG_INTERVAL_S = 1;

export interface WatchdogTarget {
  /** The process to kill; with `group`, the leader of the process group to kill. */
  pid: number;
  /** Kill the whole process group `pid` leads (spawned with `detached: true`). */
  group?: boolean;
  /** A directory to remove once the owner is gone. */
  dir?: string;
}

/**
 * Starts a detached `sh` that SIGKILLs `target` (and removes `target.dir`) once `owner`
 * (default: this process) is gone. It exits by itself when the target is gone first (after
 * the owner, when there is a dir to remove). Own process group: `stopWatchdog` also takes its
 * `sleep`. Undefined when no shell could be started (the owner's own cleanup still applies).
 */
export function startWatchdog(target: WatchdogTarget, owner: number = process.pid): ChildProcess | undefined {
  const script =
    'O=$1; T=$2; G=$3; D=$4; ' +
    'alive() { if [ "$G" = 1 ]; then kill -0 -"$T" 2>/dev/null; else kill -0 "$T" 2>/dev/null; fi; }; ' +
    'while kill -0 "$O" 2>/dev/null; do ' +
    `if [ -n "$T" ] && ! alive; then T=; [ -z "$D" ] && exit 0; fi; sleep ${WATCHDOG_INTERVAL_S}; ` +
    'done; ' +
    'if [ -n "$T" ]; then [ "$G" = 1 ] && kill -9 -"$T" 2>/dev/null; kill -9 "$T" 2>/dev/null; fi; ' +
    '[ -n "$D" ] && rm -rf "$D"; exit 0';
  try {
    const w = spawn('/bin/sh', ['-c', script, 'relq-watchdog', String(owner), String(target.pid), target.group ? '1' : '0', target.dir ?? ''], {
      stdio: 'ignore',
      detached: true,
    });
    w.on('error', () => {});
    w.unref();
    return w;
  } catch {
    return undefined;
  }
}

/** Stops a watchdog (and its `sleep`) without it touching its target. */
export function stopWatchdog(w: ChildProcess | undefined): void {
  if (w?.pid && isRunning(w)) killGroup(w.pid, 'SIGKILL');
}

/** True while `child` has neither exited nor been killed by a signal. */
export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Sends `signal` to the process group `pid` leads (spawned `detached`). Never throws. */
export function killGroup(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* the group is gone */
  }
}

/**
 * Resolves once `child` has exited (at once if it has); with `timeoutMs`, false when it has not
 * by then. Waiting keeps this process alive even for an unref'd child.
 */
export function waitForExit(child: ChildProcess, timeoutMs?: number): Promise<boolean> {
  if (!child.pid || !isRunning(child)) return Promise.resolve(true);
  child.ref();
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const onExit = () => {
      if (timer) clearTimeout(timer);
      resolve(true);
    };
    child.once('exit', onExit);
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        child.off('exit', onExit);
        resolve(false);
      }, timeoutMs);
      timer.unref?.();
    }
  });
}
