/**
 * Round trips per job, counted with MONITOR on a short run (once per run): each command a
 * client sent is one line; a MULTI..EXEC block from one client counts once (one round trip);
 * lines from scripts ('lua') are counted separately. Pipelined non-transaction commands count
 * one each.
 */
import { ADAPTERS, type LibName } from '../adapters.js';
import { makePayload } from '../payload.js';
import { log } from '../recorder.js';
import { Completions, type Scenario, type ScenarioContext } from './kit.js';

export const monitor: Scenario = {
  name: 'monitor',
  when: 'first rep',
  libs: 'queues',
  async run(ctx, libs) {
    for (const name of libs) await roundTrips(ctx, name);
  },
};

async function roundTrips({ cfg, conn, admin, rec, flush }: ScenarioContext, name: LibName): Promise<void> {
  const m = cfg.monitorJobs;
  await flush();
  const adminAddr = /addr=(\S+)/.exec((await admin.client('INFO')) as string)?.[1];
  const mon = await admin.monitor();
  let client = 0;
  let lua = 0;
  let inner = 0;
  const inMulti = new Set<string>();
  let sentinelSeen: (() => void) | undefined;
  const sentinel = `bench-sentinel-${Math.random()}`;
  mon.on('monitor', (_time: string, args: string[], source: string) => {
    const cmd = String(args[0]).toLowerCase();
    if (source === adminAddr) {
      if (cmd === 'echo' && args[1] === sentinel) sentinelSeen?.();
      return;
    }
    if (source === 'lua') {
      lua++;
      return;
    }
    if (cmd === 'multi') {
      inMulti.add(source);
      client++;
    } else if (cmd === 'exec' || cmd === 'discard') {
      inMulti.delete(source);
      inner++;
    } else if (!inMulti.has(source)) {
      client++;
    } else {
      inner++;
    }
  });
  const drain = async () => {
    const seen = new Promise<void>((r) => (sentinelSeen = r));
    await admin.echo(sentinel);
    await seen;
    const out = { client, lua, all: client + lua + inner };
    client = 0;
    lua = 0;
    inner = 0;
    return out;
  };
  // add, one by one
  const p = await ADAPTERS[name].producer(conn);
  await p.add(makePayload(-1));
  await drain();
  for (let i = 0; i < m; i++) await p.add(makePayload(i));
  const add = await drain();
  await p.close();
  // process at concurrency 10: the m jobs plus the warm-up one
  await drain();
  const done = new Completions(m + 1);
  const consumer = await ADAPTERS[name].consumer(conn, 10, { onDone: done.onDone });
  await done.wait(`monitor ${name}`);
  const proc = await drain();
  await consumer.close();
  mon.disconnect();
  const pm = m + 1;
  rec.record(name, 'rt.add', add.client / m);
  rec.record(name, 'rt.proc', proc.client / pm);
  rec.record(name, 'mon.addTotal', add.all / m);
  rec.record(name, 'mon.procTotal', proc.all / pm);
  log(
    `monitor  ${name.padEnd(9)} client cmds/add ${(add.client / m).toFixed(2)} (${(add.all / m).toFixed(2)} in all), per processed job ${(proc.client / pm).toFixed(2)} (${(proc.all / pm).toFixed(2)} in all; includes worker start-up)`,
  );
}
