/** RESULTS.md's section on larger payloads (bench/scenarios/payloads.ts). */
import { isFloor, type LibName } from './adapters.js';
import type { RunMeta } from './results.js';
import { fmt } from './stats.js';

/** What the section takes from the report: its libraries and its ways of showing a figure. */
export interface ReportCells {
  libs: LibName[];
  label: Readonly<Record<string, string>>;
  cell(lib: string, metric: string, digits?: number): string;
  med(lib: string, metric: string): number;
  ratio(a: number, b: number): string;
  floorRatio(metric: string, rate?: string): string;
}

export function payloadSection(meta: RunMeta, { libs, label, cell, med, ratio, floorRatio }: ReportCells): string[] {
  const sizes = (meta.cfg.payloadSizes ?? []).filter(({ kib }) => libs.some((l) => Number.isFinite(med(l, `pay${kib}k.proc10.rate`))));
  if (!sizes.length) return [];
  const batch = meta.cfg.payloadAddBatch ?? 100;
  const floors = libs.some(isFloor);
  const reps = meta.cfg.reps;
  const L: string[] = [];
  L.push(`## Larger payloads: 10 and 100 KiB of JSON (${reps > 1 ? `median of ${reps} reps, <sub>min–max</sub>` : '1 rep'})`, '');
  const head = ['figure', ...libs.map((l) => label[l]!), 'relq / BullMQ', 'relq / bee-queue', ...(floors ? ['relq / floor (the faster)'] : [])];
  L.push(`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`);
  for (const { kib, jobs } of sizes) {
    const phases: Array<[string, string]> = [
      ['add one by one', 'addOne'],
      [`add, batches of ${batch}`, 'addBatch'],
      ['process, c=10', 'proc10'],
    ];
    const figures: Array<[string, string, number]> = [
      ['jobs/s', 'rate', 0],
      ['Redis CPU µs per job', 'redisCpuUs', 1],
      ['Node CPU µs per job', 'nodeCpuUs', 1],
    ];
    for (const [what, key, digits] of figures) {
      for (const [phaseLabel, phase] of phases) {
        const m = `pay${kib}k.${phase}.${key}`;
        const extra = [ratio(med('relq', m), med('bullmq', m)), ratio(med('relq', m), med('bee-queue', m))];
        if (floors) extra.push(floorRatio(m, `pay${kib}k.${phase}.rate`));
        L.push(`| ${kib} KiB (${fmt(jobs, 0)} jobs), ${phaseLabel}: ${what} | ${libs.map((l) => cell(l, m, digits)).join(' | ')} | ${extra.join(' | ')} |`);
      }
    }
  }
  L.push('');
  L.push(
    `Each job's JSON is the usual payload's fields and a list of line items (records of five fields), its note padded to the exact size (bench/payload.ts). Per size and rep, every library adds its jobs one by one, then in batches of ${batch}, then drains them at concurrency 10 from a queue filled in batches of ${batch}; the server is emptied before each measurement. Fewer jobs at 100 KiB keep Redis under about 200 MB. CPU per job over the whole measurement: Redis \`used_cpu_user+sys\`, Node \`process.cpuUsage()\` of the bench process (JSON encoding of the payloads included). The floors' adds are one figure (the batch floor adds as the floor does); "relq / floor" is against the floor with the higher jobs/s at that phase, named.`,
    '',
  );
  return L;
}
