/**
 * Values from Redis are anyone's who may write a queue: the CLI prints the control characters
 * in them (ESC/CSI/OSC sequences, C1 controls, CR, LF) as escapes, in every command and mode,
 * so that a job cannot clear the operator's screen, retitle the terminal or print fake lines.
 */
import type { Redis } from 'ioredis';
import type { Queue } from '../../lib/index.js';
import { uniquePrefix } from '../support/redis.js';
import { waitUntil } from '../support/wait.js';
import type { CliRun } from '../support/cli-harness.js';
import { useCliBed } from './cli-bed.js';

/** Clears the screen, homes the cursor, retitles the window (OSC ... BEL), a C1 CSI, then a fake line. */
const FAKE_LINE = '2026-01-01T00:00:00.000Z completed fake-job';
const HOSTILE = `\u001b[2J\u001b[H\u001b]0;pwned\u0007\u009b31m\r\n${FAKE_LINE}`;
/** The same as the CLI prints it on a text line. */
const ESCAPED = `\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07\\x9b31m\\r\\n${FAKE_LINE}`;

const bed = useCliBed();
const { cli, relq } = bed;
let admin: Redis;
beforeAll(() => {
  admin = bed.client();
});

/** Nothing a terminal would obey: no control character but the CLI's own line feeds. */
function expectPrintable(what: string, text: string): void {
  const controls = [...text].filter((c) => /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(c));
  expect({ what, controls }).toEqual({ what, controls: [] });
  expect({ what, fakeLine: text.split('\n').some((l) => l.startsWith(FAKE_LINE)) }).toEqual({ what, fakeLine: false });
}

/**
 * A queue holding a job with hostile data, error, log line and progress (through the API),
 * and one with a hostile name and id (written as a foreign writer would, beside relq).
 */
async function hostileQueue(prefix: string): Promise<Queue> {
  const q = bed.queue('hostile', prefix);
  await q.add({ note: HOSTILE }, { jobId: 'bad', attempts: 1 });
  const [lease] = await q.lease();
  await q.log(lease!, HOSTILE);
  await q.updateProgress(lease!, { step: HOSTILE });
  await q.nack(lease!, { error: HOSTILE }); // attempts: 1, so it dies with this error
  await q.add('plain', { jobId: 'named', name: 'plain' });
  const jobs = q.keys.byName.jobs;
  const [meta, data] = (await admin.hget(jobs, 'named'))!.split('\n');
  await admin.hset(jobs, HOSTILE, `${JSON.stringify({ ...JSON.parse(meta!), n: HOSTILE })}\n${data}`);
  await admin.rpush(q.keys.byName.pending, HOSTILE);
  await admin.zadd(`{${prefix}:}:queues`, 1, HOSTILE);
  return q;
}

test('workers prints a hostile host and app name (a foreign entry) as escapes', async () => {
  const prefix = uniquePrefix();
  const q = bed.queue('crew', prefix);
  const info = JSON.stringify({ h: HOSTILE, p: 1, a: HOSTILE, c: 1, r: 0 });
  await admin.zadd(q.keys.derived.workers, Date.now() + 60_000, 'w1');
  await admin.hset(q.keys.derived.workerInfo, 'w1', `1 2 ${info}`);
  const text = await relq(prefix, 'workers', 'crew');
  const asJson = await relq(prefix, '--json', 'workers', 'crew');
  for (const [what, r] of [['text', text], ['json', asJson]] as const) {
    expectPrintable(`workers ${what} stdout`, r.stdout);
    expectPrintable(`workers ${what} stderr`, r.stderr);
  }
  expect(text.stdout).toContain(`${ESCAPED}  1    ${ESCAPED}`);
  expect(JSON.parse(asJson.stdout)).toMatchObject([{ host: HOSTILE, appName: HOSTILE }]);
}, 30_000);

test('queues, jobs and job print hostile names, ids, data, errors, log lines and progress as escapes', async () => {
  const prefix = uniquePrefix();
  await hostileQueue(prefix);
  const runs: Array<[string, CliRun]> = [
    ['queues', await relq(prefix, 'queues')],
    ['jobs dead', await relq(prefix, 'jobs', 'hostile', '--state', 'dead')],
    ['jobs pending', await relq(prefix, 'jobs', 'hostile', '--state', 'pending')],
    ['job bad', await relq(prefix, 'job', 'hostile', 'bad')],
  ];
  for (const [what, r] of runs) {
    expectPrintable(`${what} stdout`, r.stdout);
    expectPrintable(`${what} stderr`, r.stderr);
  }
  const out = Object.fromEntries(runs.map(([what, r]) => [what, r]));
  expect(out['queues']!.stdout).toContain(ESCAPED);
  expect(out['jobs dead']!.stdout).toMatch(/^bad\s.*\\x1b\[2J.*fake-job$/m); // the error, in its row
  expect(out['jobs pending']!.stdout).toContain(`${ESCAPED}  ${ESCAPED}`); // id and name
  const job = out['job bad']!.stdout;
  expect(job).toMatch(/^last error\s+\\x1b\[2J/m);
  expect(job).toContain(`  ${ESCAPED}`); // the log line, indented under 'log:'
  expect(job).toMatch(/^data\s+.*\\x9b31m/m); // in JSON text: C1 controls, which JSON.stringify leaves raw
  expect(job).toMatch(/^progress\s+.*\\x9b31m/m);
}, 60_000);

test('--json keeps the values (the same JSON, C1 controls as \\u escapes) and prints no raw control', async () => {
  const prefix = uniquePrefix();
  await hostileQueue(prefix);
  const job = await relq(prefix, '--json', 'job', 'hostile', 'bad');
  const listed = await relq(prefix, '--json', 'queues');
  for (const [what, r] of [['job', job], ['queues', listed]] as const) {
    expectPrintable(`${what} --json`, r.stdout);
  }
  expect(JSON.parse(job.stdout)).toMatchObject({ data: { note: HOSTILE }, lastError: HOSTILE, progress: { step: HOSTILE }, logs: [HOSTILE] });
  expect(job.stdout).toContain('\\u009b31m');
  expect((JSON.parse(listed.stdout) as Array<{ name: string }>).map((q) => q.name)).toContain(HOSTILE);
}, 60_000);

test('watch prints events carrying hostile text as escapes, in text and JSON lines', async () => {
  const prefix = uniquePrefix();
  const q = bed.queue<string>('live', prefix);
  for (const json of [false, true]) {
    const w = cli.start(['--redis', bed.redis.url, '--prefix', prefix, ...(json ? ['--json'] : []), 'watch', 'live']);
    if (!json) await waitUntil(() => w.stderr().includes("watching 'live'"), 'watch started', 15_000);
    // the listeners key may outlive an earlier watcher: send until this one has printed the failure
    let n = 0;
    await waitUntil(
      async () => {
        const id = `${json ? 'j' : 't'}${n++}`;
        await q.add('x', { jobId: id, attempts: 1 });
        const [lease] = await q.lease();
        await q.log(lease!, HOSTILE);
        await q.nack(lease!, { error: HOSTILE });
        return w.stdout().includes('dead');
      },
      'the hostile events printed',
      15_000,
      200,
    );
    w.proc.kill('SIGINT');
    const r = await w.done;
    expect(r.code).toBe(0);
    expectPrintable(`watch${json ? ' --json' : ''}`, r.stdout);
    expectPrintable(`watch${json ? ' --json' : ''} stderr`, r.stderr);
    if (json) {
      const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; line?: string });
      expect(events.filter((e) => e.type === 'log').map((e) => e.line)).toContain(HOSTILE);
    } else {
      expect(r.stdout).toMatch(new RegExp(`^\\S+Z log\\s+t\\d+ line=${ESCAPED.replace(/[\\[\]]/g, '\\$&')}$`, 'm'));
    }
  }
}, 60_000);
