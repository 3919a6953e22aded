/**
 * The ledger of a fault test: every lease, ack sent and ack answer, from every process,
 * and the audit that reads it together with the jobs' final states.
 *
 * A lease is named `<job>@<leasedAt>` (leasedAt is Redis time; two leases of one job never
 * share a millisecond: the first must expire or be settled first). An ack is "sent" when the
 * handler returned: the settle reaches Redis after that.
 *
 * Processes append one JSON line per entry to a shared file, synchronously (appendFileSync),
 * so a process killed with SIGKILL loses nothing it wrote.
 */
import { appendFileSync, closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';

export type LedgerEntry =
  | { k: 'added'; job: string; at: number }
  | { k: 'leased'; job: string; leasedAt: number; at: number; pid: number }
  | { k: 'ack-sent'; job: string; leasedAt: number; at: number; pid: number }
  | { k: 'ack-result'; job: string; leasedAt: number; ok: boolean; at: number; pid: number };

export class Ledger {
  readonly entries: LedgerEntry[] = [];

  constructor(private readonly file?: string) {}

  record(entry: LedgerEntry): void {
    this.entries.push(entry);
    if (this.file) appendFileSync(this.file, `${JSON.stringify(entry)}\n`);
  }

  /** Every entry written to `file` (a line cut short by a kill is skipped). */
  static read(file: string): LedgerEntry[] {
    if (!existsSync(file)) return [];
    const out: LedgerEntry[] = [];
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line) continue;
      try {
        out.push(JSON.parse(line) as LedgerEntry);
      } catch {
        // the last line of a killed process
      }
    }
    return out;
  }
}

export interface AuditResult {
  /** Jobs whose add was confirmed. */
  jobs: number;
  /** Confirmed jobs that did not complete (gone, or stuck in another state). */
  lost: string[];
  /** Jobs with `true` acks from two different leases. */
  completedTwice: string[];
  /** `true` acks from a lease that another lease of the job had already replaced when the ack was sent. */
  staleAcksAccepted: string[];
  /** `false` acks (refused: the lease was gone). */
  refusedAcks: number;
  /** Leases beyond the first, over all jobs. */
  duplicateDeliveries: number;
  /** Completed jobs without any `true` ack in the ledger (a lost reply the caller never heard of). */
  completedUnheard: string[];
}

/**
 * Reads the ledger against each confirmed job's final state (`finalState(id)`: its state,
 * or null when the job is gone).
 */
export async function audit(
  entries: readonly LedgerEntry[],
  finalState: (id: string) => Promise<string | null>,
): Promise<AuditResult> {
  const added = new Set<string>();
  const leases = new Map<string, Set<number>>();
  const trueAcks = new Map<string, Set<number>>();
  const sentAt = new Map<string, number>(); // `${job}@${leasedAt}` -> first ack-sent time
  let refusedAcks = 0;
  for (const e of entries) {
    if (e.k === 'added') added.add(e.job);
    else if (e.k === 'leased') {
      if (!leases.has(e.job)) leases.set(e.job, new Set());
      leases.get(e.job)!.add(e.leasedAt);
    } else if (e.k === 'ack-sent') {
      const key = `${e.job}@${e.leasedAt}`;
      if (!sentAt.has(key)) sentAt.set(key, e.at);
    } else if (e.ok) {
      if (!trueAcks.has(e.job)) trueAcks.set(e.job, new Set());
      trueAcks.get(e.job)!.add(e.leasedAt);
    } else refusedAcks += 1;
  }
  const lost: string[] = [];
  const completedUnheard: string[] = [];
  for (const id of added) {
    const state = await finalState(id);
    if (state !== 'completed') lost.push(id);
    else if (!trueAcks.has(id)) completedUnheard.push(id);
  }
  const completedTwice = [...trueAcks].filter(([, ls]) => ls.size > 1).map(([id]) => id);
  const staleAcksAccepted: string[] = [];
  for (const [id, acked] of trueAcks) {
    const all = [...(leases.get(id) ?? [])];
    for (const leasedAt of acked) {
      const sent = sentAt.get(`${id}@${leasedAt}`) ?? Infinity;
      if (all.some((other) => other > leasedAt && other < sent)) staleAcksAccepted.push(`${id}@${leasedAt}`);
    }
  }
  let duplicateDeliveries = 0;
  for (const ls of leases.values()) duplicateDeliveries += ls.size - 1;
  return { jobs: added.size, lost, completedTwice, staleAcksAccepted, refusedAcks, duplicateDeliveries, completedUnheard };
}

interface LeaseView {
  id: string;
  leasedAt: number;
}

/** A handler that writes 'leased' when it starts and 'ack-sent' when it returns. */
export function ledgered<J extends LeaseView, R>(ledger: Ledger, handler: (job: J) => Promise<R> | R): (job: J) => Promise<R> {
  return async (job) => {
    ledger.record({ k: 'leased', job: job.id, leasedAt: job.leasedAt, at: Date.now(), pid: process.pid });
    const result = await handler(job);
    ledger.record({ k: 'ack-sent', job: job.id, leasedAt: job.leasedAt, at: Date.now(), pid: process.pid });
    return result;
  };
}

/** Writes each settle answer a Worker reports: 'completed' is a true ack, 'lost' a refused one. */
export function recordAnswers(
  ledger: Ledger,
  events: { subscribe(fn: (e: { type: string; job?: LeaseView }) => void): unknown },
): void {
  events.subscribe((e) => {
    if ((e.type === 'completed' || e.type === 'lost') && e.job) {
      ledger.record({ k: 'ack-result', job: e.job.id, leasedAt: e.job.leasedAt, ok: e.type === 'completed', at: Date.now(), pid: process.pid });
    }
  });
}

/** Reads a ledger file as it grows: each call parses only what was appended since the last. */
export class LedgerTail {
  readonly entries: LedgerEntry[] = [];
  private offset = 0;
  private partial = '';

  constructor(private readonly file: string) {}

  /** All entries so far. */
  read(): LedgerEntry[] {
    if (!existsSync(this.file)) return this.entries;
    const fd = openSync(this.file, 'r');
    try {
      const size = fstatSync(fd).size;
      if (size > this.offset) {
        const buf = Buffer.alloc(size - this.offset);
        readSync(fd, buf, 0, buf.length, this.offset);
        this.offset = size;
        const lines = (this.partial + buf.toString('utf8')).split('\n');
        this.partial = lines.pop() ?? '';
        for (const line of lines) {
          if (!line) continue;
          try {
            this.entries.push(JSON.parse(line) as LedgerEntry);
          } catch {
            // a line cut short by a kill
          }
        }
      }
    } finally {
      closeSync(fd);
    }
    return this.entries;
  }
}
