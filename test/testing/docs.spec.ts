/**
 * docs/testing.md shows test files of this folder word for word, so that what it shows runs
 * with the suite (each file's own spec).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(ROOT, 'docs', 'testing.md'), 'utf8');
const blocks = [...doc.matchAll(/<!-- file: (\S+) -->\n```ts\n([\s\S]*?)\n```/g)].map((m) => ({ path: m[1]!, code: m[2]! }));

test('docs/testing.md shows the app, a processor unit test, a service test with the fake and an e2e test', () => {
  expect(blocks.map((b) => b.path)).toEqual([
    'test/testing/emails/emails.service.ts',
    'test/testing/emails/email.processor.ts',
    'test/testing/email.processor.spec.ts',
    'test/testing/emails.service.spec.ts',
    'test/testing/emails.e2e-spec.ts',
  ]);
});

test.each(blocks.map((b) => [b.path, b.code] as const))('docs/testing.md shows %s as it is', (path, code) => {
  expect(code).toBe(readFileSync(join(ROOT, path), 'utf8').trimEnd());
});
