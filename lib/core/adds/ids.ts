import { randomBytes } from 'node:crypto';

/**
 * Job ids made by this process: a random 64-bit instance part and a counter. Unique
 * without a Redis round trip, so an add stays one script call. A partition's ids start with
 * its number (`3.k1x9….1f`, lib/core/partitions/layout.ts), so that the id tells where the job is.
 */
export class IdGenerator {
  private readonly instance: string;
  private counter = 0;

  constructor(prefix = '') {
    this.instance = prefix + BigInt(`0x${randomBytes(8).toString('hex')}`).toString(36);
  }

  next(): string {
    this.counter += 1;
    return `${this.instance}.${this.counter.toString(36)}`;
  }
}

// 72 random bits per process, then a counter: unique without a syscall per request.
const requestPrefix = randomBytes(9).toString('base64url');
let requestCounter = 0;

/** A lease request id; the tokens of its leases are `<requestId>.<n>`. */
export function newRequestId(): string {
  requestCounter += 1;
  return `${requestPrefix}${requestCounter.toString(36)}`;
}

let logCounter = 0;

/**
 * This process's mark and the next number of its log lines: with them log.lua recognises a
 * line sent again after a lost reply (numbers only grow within a process).
 */
export function nextLogStamp(): [writer: string, n: number] {
  logCounter += 1;
  return [requestPrefix, logCounter];
}
