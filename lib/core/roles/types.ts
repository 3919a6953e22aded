/** Who may use a queue at once (docs/bounded-fair-batch.md). */
export interface ExclusiveOptions {
  /** At most one process adds jobs; others get QueueInUseError (or wait, see waitMs). */
  producer?: boolean;
  /** At most one process leases jobs. */
  consumer?: boolean;
  /** How long to wait for a role that another process holds. Default 0: fail at once. */
  waitMs?: number;
  /** The role lease: a crashed holder's role is free after this long. Default 10 s. */
  ttlMs?: number;
}
