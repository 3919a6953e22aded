/**
 * Every TypeScript snippet of the README and docs/ compiles against the library's sources, as a
 * reader would paste it (test/docs/doc-snippets.ts says how a block is taken). Blocks marked
 * `fragment` are not compiled: the marking is for code that cannot stand alone, and stays rare.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { compileSnippets, extractSnippets } from './doc-snippets.js';

const ROOT = join(import.meta.dirname, '..', '..');
const docs = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const snippets = extractSnippets(ROOT, docs);
const compiled = snippets.filter((s) => s.marking?.kind !== 'file' && s.marking?.kind !== 'fragment');
let problems: Map<string, string[]>;

beforeAll(() => {
  problems = compileSnippets(ROOT, snippets);
}, 120_000);

test('the docs have snippets, nearly all of them compiled', () => {
  expect(compiled.length).toBeGreaterThan(20);
  const fragments = snippets.filter((s) => s.marking?.kind === 'fragment').map((s) => s.where);
  expect(fragments.length).toBeLessThanOrEqual(3);
});

test.each(compiled.map((s) => [s.where]))('%s compiles', (where) => {
  expect(problems.get(where)).toEqual([]);
});
