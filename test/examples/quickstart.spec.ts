import { jest } from '@jest/globals';
import { main as jobManagement } from '../../examples/job-management.js';
import { main } from '../../examples/quickstart.js';
import { startRedis, type TestRedis } from '../support/redis.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis.stop());

test('the README engine quick start runs as written', async () => {
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    await expect(main(redis.url)).resolves.toBe('sent to ada@example.com (attempt 1)');
    expect(log).toHaveBeenCalledWith('sent to ada@example.com (attempt 1)');
  } finally {
    log.mockRestore();
  }
});

test('the job management example runs as written', async () => {
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    await expect(jobManagement(redis.url)).resolves.toEqual({ page: ['initech', 'acme'], staleAck: false, drained: 2 });
    expect(log.mock.calls).toEqual([[['initech', 'acme']], [false], [2]]);
  } finally {
    log.mockRestore();
  }
});
