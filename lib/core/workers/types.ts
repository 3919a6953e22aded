/** One live worker of a queue (`queue.getWorkers()`), as of its last registration. */
export interface WorkerInfo {
  /** Random, one per Worker or BatchWorker object. */
  id: string;
  queue: string;
  host: string;
  pid: number;
  /** The worker's `appName` option (in Nest: the processor's class name unless set). */
  appName?: string;
  /** Jobs (a BatchWorker: batches) it runs at once, as of its last registration. */
  concurrency: number;
  /** Jobs its handlers were running, as of its last registration. */
  running: number;
  /** Its first registration (ms, Redis clock). */
  startedAt: number;
  /** Its last registration (ms, Redis clock): a busy worker's calls carry one every few seconds. */
  lastSeenAt: number;
}
