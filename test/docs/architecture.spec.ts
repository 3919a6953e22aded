/**
 * docs/architecture.md names the files a newcomer follows: every path it names exists, and
 * every folder of lib/ is on its map.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');

test('every file the architecture document names exists', () => {
  const named = new Set<string>();
  // full paths (lib/core/adds/producer.ts) and short ones relative to their layer (adds/producer.ts, lease.lua)
  for (const m of doc.matchAll(/`([\w./-]+\.(?:ts|lua))`/g)) named.add(m[1]!);
  const files = (dir: string): string[] =>
    readdirSync(join(ROOT, dir)).flatMap((n) => (statSync(join(ROOT, dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]));
  const all = files('lib');
  const missing = [...named].filter((p) => !(/^(lib|test|tools|bench)\//.test(p) ? existsSync(join(ROOT, p)) : all.some((f) => f.endsWith(`/${p}`))));
  expect(named.size).toBeGreaterThan(40);
  expect(missing).toEqual([]);
});

test('every folder of lib/ is on the map', () => {
  const folders = (dir: string): string[] =>
    readdirSync(join(ROOT, dir))
      .filter((n) => statSync(join(ROOT, dir, n)).isDirectory())
      .flatMap((n) => [join(dir, n), ...folders(join(dir, n))]);
  const unmapped = folders('lib')
    .filter((f) => f !== 'lib/types')
    .filter((f) => !doc.includes(`${f.split('/').slice(-1)[0]}/`) && !doc.includes(f));
  expect(unmapped).toEqual([]);
});
