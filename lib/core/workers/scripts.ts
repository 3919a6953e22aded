import { queueScript } from '../redis/script-def.js';
import type { WorkerInfo } from './types.js';

/** The live workers (get-workers.lua), dropping up to `limit` expired entries first. */
export const getWorkersScript = queueScript({
  name: 'getWorkers',
  file: 'workers/get-workers.lua',
  ops: ['getWorkers'],
  encode: (a: { limit: number; queue: string }) => [a.limit],
  decode: (reply, a): WorkerInfo[] => {
    const [, ids, entries] = reply as [number, string[], Array<string | null>];
    const out: WorkerInfo[] = [];
    ids.forEach((id, i) => {
      const info = parseEntry(id, a.queue, entries[i]);
      if (info) out.push(info);
    });
    return out.sort((x, y) => x.startedAt - y.startedAt || (x.id < y.id ? -1 : 1));
  },
});

export const WORKER_SCRIPTS = [getWorkersScript] as const;

interface Registered {
  h?: unknown;
  p?: unknown;
  a?: unknown;
  c?: unknown;
  r?: unknown;
}

/** One hash entry, '<started> <last seen> <json>'; undefined when it is not one (another writer's). */
function parseEntry(id: string, queue: string, entry: string | null | undefined): WorkerInfo | undefined {
  const m = entry ? /^(\d+) (\d+) (.*)$/s.exec(entry) : null;
  if (!m) return undefined;
  let r: Registered;
  try {
    r = JSON.parse(m[3]!) as Registered;
  } catch {
    return undefined;
  }
  if (typeof r.h !== 'string' || typeof r.p !== 'number' || typeof r.c !== 'number' || typeof r.r !== 'number') return undefined;
  const info: WorkerInfo = { id, queue, host: r.h, pid: r.p, concurrency: r.c, running: r.r, startedAt: Number(m[1]), lastSeenAt: Number(m[2]) };
  if (typeof r.a === 'string') info.appName = r.a;
  return info;
}
