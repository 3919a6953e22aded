/**
 * How a `--ref` run judges a figure: per-rep ratios of the two builds, signed by which way
 * is better, and flagged past 5 % worse (bench/compare.ts, pure: no Redis involved).
 */
import { compareSection } from '../../bench/compare.js';
import type { BenchResults, RunMeta } from '../../bench/results.js';

const meta = { libs: { relq: '0.1.0 (abc)', 'relq@ref': 'relq@def (lib/ as committed)' } } as unknown as RunMeta;
const results = (head: Record<string, number[]>, ref: Record<string, number[]>): BenchResults => ({
  samples: { relq: head, 'relq@ref': ref },
  breakdown: {},
  floor: {},
  notes: [],
});
const row = (lines: string[], label: string) => lines.find((l) => l.startsWith(`| ${label} |`));

test('a slower rate and more CPU per job are flagged past 5 %; within it, or better, they are not', () => {
  const lines = compareSection(
    meta,
    results(
      { 'procTurns10.rate': [900, 950, 880], 'procTurns10.nodeCpuUs': [10.3, 10.2, 10.4], 'procTurns10.cmds': [2.5, 2.5, 2.5], 'addTurnsOne.rate': [1200, 1100, 1300] },
      { 'procTurns10.rate': [1000, 1000, 1000], 'procTurns10.nodeCpuUs': [10, 10, 10], 'procTurns10.cmds': [3, 3, 3], 'addTurnsOne.rate': [1000, 1000, 1000] },
    ),
  );
  expect(lines[0]).toBe('## relq against relq@def (lib/ as committed), same run');
  expect(row(lines, 'process, c=10, builds taking turns: jobs/s')).toContain('**−10.0 %');
  expect(row(lines, 'process, c=10, builds taking turns: Node CPU µs per job')).toContain('| −2.9 %'); // 1/1.03 - 1
  expect(row(lines, 'process, c=10, builds taking turns: Node CPU µs per job')).not.toContain('**');
  expect(row(lines, 'process, c=10, builds taking turns: Redis commands per job')).toContain('+20.0 %');
  expect(row(lines, 'add, one by one, builds taking turns: jobs/s')).toContain('+20.0 %');
  expect(lines).toContain('4 figures compared; more than 5 % worse than at the ref: process, c=10, builds taking turns: jobs/s (−10.0 %).');
});

test('without a ref build in the run there is no section', () => {
  expect(compareSection(meta, { samples: { relq: { 'proc10.rate': [1] } }, breakdown: {}, floor: {}, notes: [] })).toEqual([]);
});

test('processing is compared from the run in which the builds take turns, not from the solo drain', () => {
  const lines = compareSection(meta, results({ 'proc10.rate': [500, 500, 500], 'procTurns10.rate': [1000, 1000, 1000] }, { 'procTurns10.rate': [1000, 1000, 1000] }));
  expect(row(lines, 'process, c=10, builds taking turns: jobs/s')).toContain('| +0.0 %');
  expect(lines.some((l) => l.startsWith('| process, c=10: '))).toBe(false);
  expect(lines).toContain('1 figures compared; none is more than 5 % worse than at the ref.');
});

test('adds are compared from the run in which the builds take turns, not from the solo adds', () => {
  const lines = compareSection(meta, results({ 'addOne.rate': [500, 500, 500], 'addTurnsOne.rate': [1000, 1000, 1000] }, { 'addOne.rate': [1000, 1000, 1000], 'addTurnsOne.rate': [1000, 1000, 1000] }));
  expect(row(lines, 'add, one by one, builds taking turns: jobs/s')).toContain('| +0.0 %');
  expect(lines.some((l) => l.startsWith('| add, one by one: '))).toBe(false);
  expect(lines).toContain('1 figures compared; none is more than 5 % worse than at the ref.');
});

test('latency is compared from the run in which the builds take turns, not from the solo run', () => {
  const lines = compareSection(meta, results({ 'lat.p50': [0.5, 0.5, 0.5], 'latTurns.p50': [1.2, 1.2, 1.2] }, { 'latTurns.p50': [1, 1, 1] }));
  expect(row(lines, 'latency p50 at a steady rate, builds taking turns (ms)')).toContain('**−16.7 %'); // 1/1.2 - 1
  expect(lines).toContain('1 figures compared; more than 5 % worse than at the ref: latency p50 at a steady rate, builds taking turns (ms) (−16.7 %).');
});

test("the latency tail is compared from each turn's p99, not from the p99 of all a rep's samples", () => {
  const lines = compareSection(
    meta,
    results({ 'latTurns.p99': [2, 2, 2], 'latTurns.p99turn': [1.02, 1.02, 1.02] }, { 'latTurns.p99': [1, 1, 1], 'latTurns.p99turn': [1, 1, 1] }),
  );
  expect(row(lines, 'latency p99 of each 0.5 s turn, median over the turns (ms)')).toContain('| −2.0 %');
  expect(lines.some((l) => l.startsWith('| latency p99 at a steady rate'))).toBe(false);
  expect(lines).toContain('1 figures compared; none is more than 5 % worse than at the ref.');
});

test('where the run kept each turn, the change is the median of the neighbouring turns’ ratios, not of the per-rep figures', () => {
  // per rep the tree looks 10 % slower, but turn by turn it is as fast: the slow reps were slow for both
  const r = results({ 'procTurns1.rate': [900, 900, 900] }, { 'procTurns1.rate': [1000, 1000, 1000] });
  r.turns = {
    relq: { 'procTurns1.rate': [100, 200, 300, 400, 500, 600, 700] },
    'relq@ref': { 'procTurns1.rate': [100, 200, 300, 400, 500, 600, 560] },
  };
  const line = row(compareSection(meta, r), 'process, c=1, builds taking turns: jobs/s');
  expect(line).toContain('| 900 | 1,000 | +0.0 % <sub>+0.0 % … +0.0 %</sub> (7 turns) |');
  // one build 10 % slower in most turns is flagged even when its per-rep figures hide it
  r.samples.relq!['procTurns1.rate'] = [1000, 1000, 1000];
  r.turns.relq!['procTurns1.rate'] = [90, 180, 270, 360, 450, 540, 700];
  expect(row(compareSection(meta, r), 'process, c=1, builds taking turns: jobs/s')).toContain('**−10.0 %');
});

test('turns that do not pair up (a run recorded without them, or of unequal count) fall back to per-rep ratios', () => {
  const r = results({ 'procTurns1.rate': [900, 900, 900] }, { 'procTurns1.rate': [1000, 1000, 1000] });
  r.turns = { relq: { 'procTurns1.rate': [100, 100] }, 'relq@ref': { 'procTurns1.rate': [100] } };
  const line = row(compareSection(meta, r), 'process, c=1, builds taking turns: jobs/s');
  expect(line).toContain('**−10.0 %');
  expect(line).not.toContain('turns)');
});
