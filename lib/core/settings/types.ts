/** Produced and consumed messages and bytes of data (JSON) of one queue. */
export interface QueueStats {
  /**
   * Whether the queue counts now (`stats: true` stored for it). False: the figures are what was
   * counted while it did (zeros if it never did), not the queue's traffic.
   */
  enabled: boolean;
  produced: { messages: number; bytes: number };
  /** Deliveries: a job leased twice (a retry) counts twice. */
  consumed: { messages: number; bytes: number };
}
