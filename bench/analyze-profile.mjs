#!/usr/bin/env node
// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by package /
// file, and inclusive time of the busiest frames. Usage:
//   node bench/analyze-profile.mjs FILE [top] [WINDOW.json]
// WINDOW.json ({start, end} in monotonic µs, written by bench/profile.ts) limits the
// summary to the measured phase.
import { readFileSync } from 'node:fs';

const file = process.argv[2];
const top = Number(process.argv[3] ?? 25);
if (!file) {
  console.error('usage: analyze-profile.mjs FILE.cpuprofile [top]');
  process.exit(2);
}
const prof = JSON.parse(readFileSync(file, 'utf8'));
const win = process.argv[4] ? JSON.parse(readFileSync(process.argv[4], 'utf8')) : undefined;
const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// time per sample (µs); samples outside the window get weight 0
const dts = prof.timeDeltas.map((d, i, all) => all[i + 1] ?? 0);
if (win) {
  let t = prof.startTime;
  for (let i = 0; i < prof.samples.length; i++) {
    t += prof.timeDeltas[i];
    if (t < win.start || t > win.end) dts[i] = 0;
  }
}
const self = new Map();
for (let i = 0; i < prof.samples.length; i++) {
  self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + dts[i]);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);

function where(cf) {
  const url = cf.url || '';
  if (!url) return cf.functionName.startsWith('(') ? cf.functionName : '(native)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const l = /\/(lib\/.*|bench\/.*)$/.exec(url);
  return l ? l[1].replace(/^\.bench-tmp\//, '') : url;
}
function name(cf) {
  return `${cf.functionName || '(anonymous)'} ${where(cf)}:${cf.lineNumber + 1}`;
}

const byFn = new Map();
const byPkg = new Map();
for (const [id, t] of self) {
  const cf = nodes.get(id).callFrame;
  byFn.set(name(cf), (byFn.get(name(cf)) ?? 0) + t);
  const w = where(cf);
  const pkg = w.startsWith('lib/') ? w : w.startsWith('bench/') ? 'bench' : w;
  byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + t);
}

// inclusive time per function name (counted once per sample stack)
const incl = new Map();
for (let i = 0; i < prof.samples.length; i++) {
  const dt = dts[i];
  if (!dt) continue;
  const seen = new Set();
  let id = prof.samples[i];
  while (id !== undefined) {
    const k = name(nodes.get(id).callFrame);
    if (!seen.has(k)) {
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + dt);
    }
    id = parent.get(id);
  }
}

const idle = byFn.get('(idle) (idle):0') ?? 0;
const busy = total - idle;
const pct = (t, of = busy) => `${((t / of) * 100).toFixed(1).padStart(5)}%`;
const ms = (t) => `${(t / 1000).toFixed(0).padStart(6)} ms`;
console.log(`profile ${file}${win ? ` (window: ${win.mode}, ${win.n} jobs, ${((win.end - win.start) / 1000).toFixed(0)} ms)` : ''}\n  wall ${ms(total)}, busy ${ms(busy)} (${pct(busy, total)} of wall), idle ${ms(idle)}; percentages below are of busy time\n`);
console.log('self time by package / file:');
for (const [k, t] of [...byPkg].filter(([k]) => k !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`  ${pct(t)} ${ms(t)}  ${k}`);
console.log('\nself time by function:');
for (const [k, t] of [...byFn].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(t)} ${ms(t)}  ${k}`);
console.log('\ninclusive time (relq lib/ and ioredis frames):');
for (const [k, t] of [...incl]
  .filter(([k]) => / lib\/|ioredis|bench\//.test(k))
  .sort((a, b) => b[1] - a[1])
  .slice(0, top))
  console.log(`  ${pct(t)} ${ms(t)}  ${k}`);
