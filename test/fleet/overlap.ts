/** Jobs as a handler saw them run, and how many ran at once. */
export interface Run {
  id: string;
  tag: string;
  start: number;
  end: number;
}

/** The most runs in progress at one instant within [from, to] (ms, this machine's clock). */
export function mostAtOnce(runs: readonly Run[], from = -Infinity, to = Infinity): number {
  const edges: Array<[number, number]> = [];
  for (const r of runs) {
    const s = Math.max(r.start, from);
    const e = Math.min(r.end, to);
    if (s < e) edges.push([s, 1], [e, -1]);
  }
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]); // an end before a start at the same instant
  let now = 0;
  let most = 0;
  for (const [, d] of edges) {
    now += d;
    most = Math.max(most, now);
  }
  return most;
}

/** The runs that overlap `run` (other than itself). */
export function overlapping(runs: readonly Run[], run: Run): Run[] {
  return runs.filter((r) => r !== run && r.start < run.end && run.start < r.end);
}
