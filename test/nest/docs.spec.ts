import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// docs/nest.md's quick start is the sample app's source, word for word: `npm run typecheck`
// compiles it and test/sample/sample.e2e-spec.ts runs it, so the docs compile as written.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const fileBlocks = (doc: string) =>
  [...doc.matchAll(/<!-- file: (\S+) -->\n```ts\n([\s\S]*?)\n```/g)].map((m) => ({ path: m[1]!, code: m[2]! }));
const blocks = fileBlocks(readFileSync(join(root, 'docs', 'nest.md'), 'utf8'));
const readmeBlocks = fileBlocks(readFileSync(join(root, 'README.md'), 'utf8'));

test('the quick start shows module, producer, processor, health and main', () => {
  expect(blocks.map((b) => b.path)).toEqual(
    expect.arrayContaining([
      'sample/src/app.module.ts',
      'sample/src/emails/emails.module.ts',
      'sample/src/emails/emails.controller.ts',
      'sample/src/emails/email.processor.ts',
      'sample/src/health/health.controller.ts',
      'sample/src/main.ts',
    ]),
  );
});

test.each(blocks.map((b) => [b.path, b.code] as const))('docs/nest.md shows %s as it is', (path, code) => {
  expect(code).toBe(readFileSync(join(root, path), 'utf8').trimEnd());
});

test('the README shows the Nest module, feature module, processor and health', () => {
  expect(readmeBlocks.map((b) => b.path)).toEqual([
    'sample/src/app.module.ts',
    'sample/src/emails/emails.module.ts',
    'sample/src/emails/email.processor.ts',
    'sample/src/health/health.controller.ts',
  ]);
});

test.each(readmeBlocks.map((b) => [b.path, b.code] as const))('README.md shows %s as it is', (path, code) => {
  expect(code).toBe(readFileSync(join(root, path), 'utf8').trimEnd());
});

test('docs/nest.md installs relq as the README does, from its packed tarball: relq is not on the npm registry', () => {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  for (const doc of ['README.md', 'docs/nest.md']) {
    const text = readFileSync(join(root, doc), 'utf8');
    expect(text).not.toMatch(/npm (install|i) relq\b/);
    expect(text).toContain(`npm install ./relq/relq-${version}.tgz`);
  }
});

test("docs/nest.md's Testing section sends an app to relq/testing, not to this repository's own test harness", async () => {
  const doc = readFileSync(join(root, 'docs', 'nest.md'), 'utf8');
  const section = doc.slice(doc.indexOf('\n## Testing\n'), doc.indexOf('\n## Migrating from'));
  const testing: Record<string, unknown> = await import('relq/testing');
  expect(section).toContain('`relq/testing`');
  for (const name of ['startTestRedis', 'createFakeQueue', 'createTestJob']) {
    expect(section).toContain(`\`${name}(`);
    expect(typeof testing[name]).toBe('function');
  }
  expect(section).not.toContain('test/support');
});
