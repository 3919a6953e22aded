import { queueScript } from '../redis/script-def.js';

/** read-metrics.lua's answer: the stored keepMinutes, the first minute read, Redis time, then each minute's hash. */
export interface StoredMetrics {
  keepMinutes: number;
  firstMinute: number;
  now: number;
  minutes: string[][];
}

/** A range of minutes of the metrics history (read-metrics.lua). */
export const readMetricsScript = queueScript({
  name: 'readMetrics',
  file: 'metrics-history/read-metrics.lua',
  ops: ['getMetrics'],
  readOnly: true,
  encode: (a: { from: number | undefined; to: number | undefined; minutes: number; maxMinutes: number }) => [
    a.from ?? '',
    a.to ?? '',
    a.minutes,
    a.maxMinutes,
  ],
  decode: (reply): StoredMetrics => {
    const [keepMinutes, firstMinute, now, ...minutes] = reply as [number, number, number, ...string[][]];
    return { keepMinutes, firstMinute, now, minutes };
  },
});

export const METRICS_HISTORY_SCRIPTS = [readMetricsScript] as const;
