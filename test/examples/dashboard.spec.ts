import { readFileSync } from 'node:fs';
import { main } from '../../examples/dashboard.js';
import type { QueueOverview } from '../../lib/dashboard/index.js';
import { waitForValue } from '../support/wait.js';
import { useExampleRedis, withLogCaptured } from './example-bed.js';

const redis = useExampleRedis();

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
const ops = basic('ops', 'change-me');

test('the dashboard example serves the page and the queues as written, to its Basic auth user', () =>
  withLogCaptured(async (log) => {
    const running = await main(redis.url, 0);
    try {
      expect(log).toHaveBeenCalledWith(`relq dashboard on ${running.url}`);
      // without credentials, or with wrong ones, the answer asks for them (a browser shows its sign-in prompt)
      for (const headers of [{}, basic('ops', 'guess'), basic('admin', 'change-me')]) {
        const refused = await fetch(running.url, { headers });
        expect([refused.status, refused.headers.get('www-authenticate')]).toEqual([401, 'Basic realm="relq dashboard", charset="UTF-8"']);
      }
      const page = await fetch(running.url, { headers: ops });
      expect([page.status, (await page.text()).includes('<title>relq dashboard</title>')]).toEqual([200, true]);
      // the bounced email ends in the dead letters, the report waits as a delayed job
      const queues = await waitForValue(async () => {
        const body = (await (await fetch(`${running.url}api/queues`, { headers: ops })).json()) as { queues: QueueOverview[] };
        return body.queues[0]?.counts?.dead === 1 ? body.queues : undefined;
      }, 'the bounce dead-lettered', 10_000);
      expect(queues.map((q) => [q.name, q.counts?.completed, q.counts?.dead, q.counts?.delayed])).toEqual([
        ['emails', 1, 1, 0],
        ['reports', 0, 0, 1],
      ]);
      // actions need the credentials too
      const redrive = (headers: Record<string, string>) =>
        fetch(`${running.url}api/queues/emails/redrive`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-relq-dashboard': '1', ...headers },
          body: JSON.stringify({ limit: 10 }),
        });
      expect((await redrive({})).status).toBe(403);
      expect((await redrive(ops)).status).toBe(200);
    } finally {
      await running.stop();
    }
  }));

test('docs/dashboard.md shows the Basic auth guard as it is tested', () => {
  const docs = readFileSync(new URL('../../docs/dashboard.md', import.meta.url), 'utf8');
  const block = /<!-- file: examples\/dashboard-basic-auth\.ts -->\n```ts\n([\s\S]*?)```/.exec(docs);
  expect(block?.[1]).toBe(readFileSync(new URL('../../examples/dashboard-basic-auth.ts', import.meta.url), 'utf8'));
});
