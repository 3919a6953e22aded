/** What a bench run records: its raw figures and how it ran (bench/results.json). */
export interface BenchResults {
  /** lib -> metric -> one value per rep */
  samples: Record<string, Record<string, number[]>>;
  /**
   * lib -> metric -> one value per turn of the runs in which the relq builds take turns
   * (process-turns.ts, add-turns.ts), in the order the turns ran: index i of one build and of
   * the other are neighbouring turns, which compare.ts pairs. Absent in older runs.
   */
  turns?: Record<string, Record<string, number[]>>;
  /** lib -> phase -> command -> calls per job (last rep) */
  breakdown: Record<string, Record<string, Record<string, number>>>;
  /** redis-benchmark requests/s */
  floor: Record<string, number>;
  notes: string[];
  /** cores used by other processes on the machine, one value per 0.5 s of the run */
  foreign?: number[];
}

export interface RunMeta {
  date: string;
  durationSec: number;
  command: string;
  nproc: number;
  cpuModel: string;
  memGiB: number;
  node: string;
  redis: string;
  libs: Record<string, string>;
  cfg: {
    quick: boolean;
    n: number;
    reps: number;
    batchSize: number;
    /** Batches at once (absent in runs before it existed: 1). */
    batchConcurrency?: number;
    addBatch: number;
    latencyRate: number;
    latencySec: number;
    latencyConcurrency: number;
    /** latency under load's window per library (absent in runs before it existed) */
    latencyLoadSec?: number;
    /** the window of its maximum end to end (absent in runs before it was measured so: the processing drain's rate) */
    latencyLoadMaxSec?: number;
    idleSec: number;
    memJobs: number;
    /** the payloads scenario's sizes and jobs per figure, and its add batches (absent in runs before it existed) */
    payloadSizes?: Array<{ kib: number; jobs: number }>;
    payloadAddBatch?: number;
    monitorJobs: number;
    backlogs: number[];
    /** jobs a backlog smaller than N processes per rep (absent in runs before it existed: N) */
    smallBacklogJobs?: number;
    payloadBytes: number;
    /** how relq's batch row was measured (absent in old results: lease+ackBatch) */
    batchMode?: 'BatchWorker' | 'lease+ackBatch';
    libs: string[];
    skip: string[];
  };
}
