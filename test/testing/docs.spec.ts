/**
 * docs/testing.md shows test files of this folder word for word, so that what it shows runs
 * with the suite (each file's own spec); its Jest settings run an ESM app's TypeScript test.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

describe("the section 'Jest settings for ESM'", () => {
  const section = doc.slice(doc.indexOf('## Jest settings for ESM'), doc.indexOf('## No open handles'));
  const block = (lang: string) => new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\\n\`\`\``).exec(section)?.[1] ?? '';
  let app: string | undefined;

  afterAll(() => {
    if (app) rmSync(app, { recursive: true, force: true });
  });

  test('installs what its config loads: Jest, ts-jest (the transform) and ts-node (Jest reads jest.config.ts with it)', () => {
    const install = block('sh');
    for (const pkg of ['jest', 'ts-jest', 'ts-node', '@types/jest']) expect(install.split(/\s+/)).toContain(pkg);
  });

  test('its jest.config.ts and test script run the TypeScript tests of an ESM app', () => {
    // inside the repository (.tmp/), where Node finds the packages the section installs
    mkdirSync(join(ROOT, '.tmp'), { recursive: true });
    app = mkdtempSync(join(ROOT, '.tmp', 'jest-esm-app-'));
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, isolatedModules: true } }),
    );
    writeFileSync(join(app, 'jest.config.ts'), block('ts'));
    writeFileSync(join(app, 'sum.ts'), 'export const sum = (a: number, b: number): number => a + b;\n');
    writeFileSync(join(app, 'sum.spec.ts'), "import { sum } from './sum.js';\n\ntest('sum', () => expect(sum(1, 2)).toBe(3));\n");
    const script = JSON.parse(`{${block('json')}}`).scripts.test as string;
    expect(script).toBe('node --experimental-vm-modules node_modules/jest/bin/jest.js');
    // its cache in the app's dir (removed with it), not in the system's temp dir
    const jest = spawnSync(process.execPath, ['--experimental-vm-modules', join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), '--ci', '--cacheDirectory', join(app, '.jest-cache')], {
      cwd: app,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect({ status: jest.status, stderr: jest.stderr }).toEqual({ status: 0, stderr: expect.stringContaining('Tests:       1 passed, 1 total') });
  }, 90_000);
});
