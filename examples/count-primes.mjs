// The handler file of examples/sandbox.ts: runs in a worker thread. Its default export is the
// handler; `job` has the job's fields and calls (progress, log, data, signal) as in-process.

/** @param {import('relq').Job<{ below: number }>} job */
export default async function countPrimes(job) {
  let count = 0;
  for (let n = 2; n < job.data.below; n++) {
    let prime = true;
    for (let d = 2; d * d <= n; d++) {
      if (n % d === 0) {
        prime = false;
        break;
      }
    }
    if (prime) count++;
    if (n % 10_000 === 0) await job.updateProgress({ done: n, of: job.data.below });
  }
  return count;
}
