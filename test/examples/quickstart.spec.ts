import { main as jobManagement } from '../../examples/job-management.js';
import { main } from '../../examples/quickstart.js';
import { main as whoIsWorking } from '../../examples/who-is-working.js';
import { useExampleRedis, withLogCaptured } from './example-bed.js';

const redis = useExampleRedis();

test('the README engine quick start runs as written', () =>
  withLogCaptured(async (log) => {
    await expect(main(redis.url)).resolves.toBe('sent to ada@example.com (attempt 1)');
    expect(log).toHaveBeenCalledWith('sent to ada@example.com (attempt 1)');
  }));

test('the job management example runs as written', () =>
  withLogCaptured(async (log) => {
    await expect(jobManagement(redis.url)).resolves.toEqual({ page: ['initech', 'acme'], staleAck: false, drained: 2 });
    expect(log.mock.calls).toEqual([[['initech', 'acme']], [false], [2]]);
  }));

test('the who-is-working example runs as written', () =>
  withLogCaptured(async (log) => {
    const pid = process.pid;
    const both = [`mailer pid ${pid}: 0/4 running`, `printer pid ${pid}: 0/1 running`];
    await expect(whoIsWorking(redis.url)).resolves.toEqual([both, [both[0]]]);
    expect(log.mock.calls).toEqual([[both], [[both[0]]]]);
  }));
