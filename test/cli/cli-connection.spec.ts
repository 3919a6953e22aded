/**
 * The relq CLI's connection failures: exit 3 for a Redis that cannot be reached, 5 for refused
 * credentials, and no password on stdout or stderr, whatever the command and output mode.
 */
import { Queue } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { CliHarness, closedPort, type CliRun } from '../support/cli-harness.js';

const PASSWORD = 'Pa55-w0rd-s3cret';
const WRONG = 'Wr0ng-pa55-guess';
const cli = new CliHarness();
let redis: TestRedis;
let queue: Queue | undefined;

beforeAll(async () => {
  redis = await startRedis({ password: PASSWORD });
  cli.build();
}, 60_000);
afterAll(async () => {
  await queue?.close();
  await cli.stopAll();
  await redis?.stop();
});

const urlWith = (password: string, port = redis.port): string => `redis://default:${password}@127.0.0.1:${port}`;

/** Neither password anywhere in what the run printed. */
function expectNoSecret(r: CliRun): void {
  for (const secret of [PASSWORD, WRONG]) {
    expect(r.stdout).not.toContain(secret);
    expect(r.stderr).not.toContain(secret);
  }
}

test('the right password works, from --redis or REDIS_URL', async () => {
  const prefix = uniquePrefix();
  queue = new Queue('secured', { connection: urlWith(PASSWORD), prefix });
  await queue.add(1);
  const viaFlag = await cli.run(['--redis', urlWith(PASSWORD), '--prefix', prefix, '--json', 'counts', 'secured']);
  expect(viaFlag.code).toBe(0);
  expect(JSON.parse(viaFlag.stdout)).toMatchObject({ pending: 1 });
  const viaEnv = await cli.run(['--prefix', prefix, 'queues'], { REDIS_URL: urlWith(PASSWORD) });
  expect(viaEnv.code).toBe(0);
  expect(viaEnv.stdout).toContain('secured');
  expectNoSecret(viaFlag);
  expectNoSecret(viaEnv);
}, 30_000);

test('the password of REDIS_URL is masked also when --redis overrides it', async () => {
  // a queue name that holds it stands for any text that might echo it
  const r = await cli.run(['--redis', urlWith(PASSWORD), 'counts', `q-${WRONG}`], { REDIS_URL: urlWith(WRONG) });
  expect(r.code).toBe(4);
  expect(r.stderr).toContain("no queue 'q-***'");
  expectNoSecret(r);
}, 30_000);

test('a wrong password: exit 5, and no password printed, in text and JSON, from every kind of command', async () => {
  for (const args of [['queues'], ['counts', 'secured'], ['--json', 'retry-dead', 'secured'], ['watch', 'secured'], ['--json', 'queues']]) {
    const r = await cli.run(['--redis', urlWith(WRONG), ...args]);
    expect({ args, code: r.code }).toEqual({ args, code: 5 });
    expect(r.stderr).toMatch(/refused the credentials/);
    expectNoSecret(r);
  }
  const viaEnv = await cli.run(['counts', 'secured'], { REDIS_URL: urlWith(WRONG) });
  expect(viaEnv.code).toBe(5);
  expectNoSecret(viaEnv);
}, 60_000);

test('Redis unreachable (nothing listening): exit 3, the password not printed', async () => {
  const port = await closedPort();
  for (const args of [['queues'], ['counts', 'q'], ['--json', 'watch', 'q']]) {
    const r = await cli.run(['--redis', urlWith(PASSWORD, port), ...args]);
    expect({ args, code: r.code }).toEqual({ args, code: 3 });
    expect(r.stderr).toContain(`127.0.0.1:${port}`);
    expectNoSecret(r);
  }
  const json = await cli.run(['--json', 'counts', 'q'], { REDIS_URL: urlWith(PASSWORD, port) });
  expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: 'RELQ_CONNECTION', exitCode: 3 } });
  expectNoSecret(json);
}, 60_000);

test('a URL that is no redis:// URL is a usage error (exit 2), its password not printed', async () => {
  const r = await cli.run(['--redis', `http://default:${PASSWORD}@127.0.0.1:1`, 'counts', 'q']);
  expect(r.code).toBe(2);
  expectNoSecret(r);
  // --cluster parses the URL itself: a wrong scheme or a URL that does not parse is a usage error too
  for (const url of [`http://default:${PASSWORD}@127.0.0.1:1`, `redis://default:${PASSWORD}@127.0.0.1:99999`]) {
    const c = await cli.run(['--cluster', '--redis', url, '--json', 'counts', 'q']);
    expect({ url, code: c.code }).toEqual({ url, code: 2 });
    expect(JSON.parse(c.stderr)).toMatchObject({ error: { message: expect.stringMatching(/^--redis: /), exitCode: 2 } });
    expectNoSecret(c);
  }
}, 30_000);

test('--id with a filter is a usage error found before Redis is contacted: exit 2, plain text even with --json', async () => {
  const port = await closedPort();
  for (const args of [['retry-dead', 'q', '--id', 'x', '--limit', '2'], ['--json', 'purge-dead', 'q', '--name', 'n', '--id', 'x']]) {
    const r = await cli.run(['--redis', urlWith(PASSWORD, port), ...args]);
    expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: '' });
    expect(r.stderr).toMatch(/^error: option '--id <id\.\.\.>' cannot be used with option '--(limit|name)/);
    expectNoSecret(r);
  }
}, 30_000);

test("DEBUG=ioredis:* (or *) does not print the password: the CLI turns ioredis's debug output off and says so", async () => {
  for (const DEBUG of ['ioredis:*', '*', 'express:*,ioredis:redis']) {
    for (const url of [urlWith(PASSWORD), urlWith(WRONG)]) {
      const r = await cli.run(['--redis', url, 'queues'], { DEBUG });
      expect({ DEBUG, code: r.code }).toEqual({ DEBUG, code: url === urlWith(PASSWORD) ? 0 : 5 });
      expect(r.stderr).toContain('DEBUG output of ioredis is turned off');
      expect(r.stderr).not.toMatch(/ioredis:\w+/); // not a line of it
      expectNoSecret(r);
    }
  }
  // other namespaces are left alone, and then nothing is said
  const other = await cli.run(['--redis', urlWith(PASSWORD), 'queues'], { DEBUG: 'express:*' });
  expect(other).toMatchObject({ code: 0, stderr: '' });
}, 60_000);
