// The stored job record's one-letter meta keys have one legend (RECORD_KEYS in
// lib/core/redis/record.ts): every key the TypeScript codec or the Lua code reads or writes
// is in it, and redis/record.lua's comment lists the same keys. Pure: no Redis.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { prepareJob } from '../../lib/core/adds/job-options.js';
import { DEFAULT_POLICY } from '../../lib/core/defaults.js';
import { RECORD_KEYS } from '../../lib/core/redis/record.js';

const LIB = join(process.cwd(), 'lib');
const CORE = join(LIB, 'core');
const LEGEND = new Set(Object.keys(RECORD_KEYS));

function filesUnder(dir: string, ext: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path, ext);
    return name.endsWith(ext) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Each `pattern` match's first group (split into letters when `letters`), with where it was found. */
function keysIn(files: string[], patterns: Array<{ re: RegExp; letters?: boolean }>): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const { re, letters } of patterns) {
      for (const m of text.matchAll(re)) {
        for (const key of letters ? [...m[1]!] : [m[1]!]) if (!found.has(key)) found.set(key, `${relative(process.cwd(), file)}: ${m[0]}`);
      }
    }
  }
  return found;
}

function notInLegend(found: Map<string, string>): string[] {
  return [...found].filter(([key]) => !LEGEND.has(key)).map(([key, where]) => `${key} (${where})`);
}

test('the legend names each key once, with what it holds', () => {
  for (const [key, meaning] of Object.entries(RECORD_KEYS)) {
    expect([key, /^[a-z]{1,2}$/.test(key), meaning.length > 0]).toEqual([key, true, true]);
  }
});

test('every meta key the TypeScript code reads or writes is in the legend', () => {
  const found = keysIn(filesUnder(LIB, '.ts'), [{ re: /\bmeta\??\.([a-z]{1,2})\b(?![\w(])/g }]);
  expect(found.size).toBeGreaterThan(10);
  expect(notInLegend(found)).toEqual([]);
});

test('every meta key the codec writes is in the legend', () => {
  const policy = { attempts: 2, backoff: 5, leaseMs: 10, timeoutMs: 5, keepCompletedMs: 1, keepCompleted: { count: 1 }, keepDead: { ageMs: 1, count: 1 }, dedupWindowMs: 1 };
  const keys = [
    ...Object.keys(prepareJob('opts', { jobId: 'k', name: 'n', priority: 1, ...policy }, DEFAULT_POLICY, 1).meta),
    ...Object.keys(prepareJob('opts', { group: 'g' }, DEFAULT_POLICY, 1).meta),
  ];
  expect(keys.filter((key) => !LEGEND.has(key))).toEqual([]);
  expect(new Set(keys).size).toBeGreaterThan(9);
});

test('every meta key the Lua code reads or writes is in the legend', () => {
  const found = keysIn(filesUnder(CORE, '.lua'), [
    // a decoded meta table: meta.f, pmeta.w, ...
    { re: /\b\w*[mM]eta\.([a-z]{1,2})\b(?!\w)/g },
    // a field read without decoding (redis/record.lua metaInt)
    { re: /metaInt\([^,()]+,\s*'([a-z]{1,2})'\)/g },
    // a key searched for in the meta text: '[{,]"g":"' and a class of them: '[{,]"([lkuiw])":'
    { re: /\[\{,\]"([a-z]{1,2})":/g },
    { re: /\[\{,\]"\(\[([a-z]+)\]\)":/g, letters: true },
  ]);
  expect([...found.keys()]).toEqual(expect.arrayContaining(['a', 'f', 'o', 'p', 'g', 'w', 'l', 'k', 'u', 'i', 'pa', 'eh']));
  expect(notInLegend(found)).toEqual([]);
});

test("redis/record.lua's comment lists exactly the legend's keys", () => {
  const lua = readFileSync(join(CORE, 'redis', 'record.lua'), 'utf8');
  const comment = /--\[\[([\s\S]*?)\]\]/.exec(lua)![1]!;
  const list = /Meta keys \([^)]*\):([\s\S]*?)\. A value/.exec(comment)![1]!;
  // each entry is '<key> <meaning>', entries separated by commas
  const listed = list
    .split(',')
    .map((entry) => entry.trim().split(/\s+/)[0]!)
    .sort();
  expect(listed).toEqual([...LEGEND].sort());
});
