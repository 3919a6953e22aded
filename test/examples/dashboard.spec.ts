import { jest } from '@jest/globals';
import { main, type RunningDashboard } from '../../examples/dashboard.js';
import type { QueueOverview } from '../../lib/dashboard/index.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitForValue } from '../support/wait.js';

let redis: TestRedis;
let running: RunningDashboard | undefined;
const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await running?.stop();
  log.mockRestore();
  await redis.stop();
});

test('the dashboard example serves the page and the queues as written', async () => {
  running = await main(redis.url, 0);
  expect(log).toHaveBeenCalledWith(`relq dashboard on ${running.url}`);
  const page = await fetch(running.url);
  expect([page.status, (await page.text()).includes('<title>relq dashboard</title>')]).toEqual([200, true]);
  // the bounced email ends in the dead letters, the report waits as a delayed job
  const queues = await waitForValue(async () => {
    const body = (await (await fetch(`${running!.url}api/queues`)).json()) as { queues: QueueOverview[] };
    return body.queues[0]?.counts?.dead === 1 ? body.queues : undefined;
  }, 'the bounce dead-lettered', 10_000);
  expect(queues.map((q) => [q.name, q.counts?.completed, q.counts?.dead, q.counts?.delayed])).toEqual([
    ['emails', 1, 1, 0],
    ['reports', 0, 0, 1],
  ]);
  // actions need the token
  const retry = (auth?: string) =>
    fetch(`${running!.url}api/queues/emails/redrive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-relq-dashboard': '1', ...(auth ? { authorization: auth } : {}) },
      body: JSON.stringify({ limit: 10 }),
    });
  expect((await retry()).status).toBe(403);
  expect((await retry('Bearer change-me')).status).toBe(200);
});
