import type { Redis } from 'ioredis';

/** The error of a connect attempt cut short (ioredis's CONNECTION_CLOSED_ERROR_MSG). */
const CUT_SHORT = 'Connection is closed.';

/**
 * Keeps a connection relq opened reconnecting when ioredis would end it for good: a connect
 * attempt cut short by a disconnect() that closes nothing ends the client, and every later
 * call fails at once. A Sentinel client's failover detector does exactly that when the
 * Sentinels announce the new master while the client, its master gone, is asking them where
 * to reconnect: a producer or worker then never resumed after a failover.
 *
 * The attempt's error is emitted while the client is still 'connecting', and only when it is
 * not being closed (ioredis keeps that error silent then). The client is 'end' right after;
 * it reconnects on the next tick, before anything that saw its calls fail can act.
 */
export function resumeCutShortConnects(client: Redis): void {
  client.on('error', (err: Error) => {
    if (client.status !== 'connecting' || err.message !== CUT_SHORT) return;
    process.nextTick(() => {
      if (client.status === 'end') client.connect().catch(() => undefined);
    });
  });
}
