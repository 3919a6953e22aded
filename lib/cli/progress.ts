import { Presets, SingleBar } from 'cli-progress';

/** How far a long operation got: a bar on stderr, or nothing. */
export interface Progress {
  update(done: number): void;
  stop(): void;
}

const SILENT: Progress = { update: () => undefined, stop: () => undefined };

/**
 * A progress bar on stderr for an operation over `total` items, only when stderr is a
 * terminal and the output is not --json: pipes, logs and programs get no control codes.
 */
export function progressBar(label: string, total: number, json: boolean): Progress {
  if (json || !process.stderr.isTTY || total <= 0) return SILENT;
  // the cursor stays visible: a Ctrl-C between batches must not leave the terminal without one
  const bar = new SingleBar(
    { stream: process.stderr, format: `${label} [{bar}] {value}/{total} jobs`, hideCursor: false, clearOnComplete: false },
    Presets.shades_classic,
  );
  bar.start(total, 0);
  return {
    update: (done) => bar.update(done),
    stop: () => bar.stop(),
  };
}
