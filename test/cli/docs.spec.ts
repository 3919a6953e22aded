/**
 * docs/cli.md's first examples run as written (the server's URL aside) against a private Redis
 * holding the queue they name: one of the default prefix, and the sample app's, whose prefix
 * the docs must give as the sample sets it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_PREFIX } from '../../lib/core/defaults.js';
import { useCliBed } from './cli-bed.js';

const ROOT = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8');
const firstBlock = /```bash\n([\s\S]*?)\n```/.exec(doc)![1]!;
const examples = firstBlock.split('\n').filter((l) => l.includes(' counts '));
const samplePrefix = /RELQ_PREFIX \?\? '([^']+)'/.exec(readFileSync(join(ROOT, 'sample', 'src', 'app.module.ts'), 'utf8'))![1]!;

const bed = useCliBed();

test("the first examples count a queue of the default prefix and one of the sample app's", () => {
  expect(examples).toHaveLength(2);
  expect(examples[0]).not.toContain('--prefix');
  expect(examples[1]).toContain(`--prefix ${samplePrefix} `);
});

test.each(examples.map((line) => [line]))('%s', async (line) => {
  const args = line.replace(/#.*/, '').trim().split(/\s+/);
  expect(args.slice(0, 2)).toEqual(['npx', 'relq']);
  const at = args.indexOf('--prefix');
  const prefix = at < 0 ? DEFAULT_PREFIX : args[at + 1]!;
  const q = bed.queue<string>(args[args.length - 1]!, prefix);
  await q.add('hello');
  const run = await bed.cli.run(args.slice(2).map((a) => (a.startsWith('redis://') ? bed.redis.url : a)));
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  expect(run.stdout).toMatch(/^pending\s+1$/m);
}, 30_000);
