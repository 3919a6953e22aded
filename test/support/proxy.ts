/**
 * A small TCP proxy between clients and Redis (Node `net`) that injects network faults:
 * latency, replies dropped after the command reached Redis (the connection is then reset,
 * so ioredis reconnects and resends: a replay), and half-open connections (frozen: nothing
 * forwarded either way, nothing closed).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

interface Pair {
  client: Socket;
  upstream: Socket;
  frozen: boolean;
  openedAt: number;
}

/** A connection younger than this keeps its replies: it is still in its handshake (AUTH, HELLO). */
const DROP_MIN_AGE_MS = 200;

export interface FaultProxy {
  readonly port: number;
  /** redis://127.0.0.1:<port> */
  readonly url: string;
  /** Connections open now (frozen ones included). */
  readonly connections: number;
  /** Replies dropped so far. */
  readonly dropped: number;
  /** Replies still to be dropped (armed by dropReplies). */
  readonly dropsArmed: number;
  /** Each chunk waits this long, both ways (order kept). 0 turns it off. */
  setLatency(ms: number): void;
  /**
   * The next `n` replies (chunks from Redis) are swallowed, each time resetting that client's
   * connection: the command ran, the client never hears of it and resends it. Connections in
   * their first 200 ms (the handshake) are spared.
   */
  dropReplies(n: number): void;
  /** Every open connection stops forwarding both ways and is left open (half-open). */
  freezeAll(): void;
  /** Resets every open connection. */
  resetAll(): void;
  close(): Promise<void>;
}

export async function startProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const pairs = new Set<Pair>();
  let latency = 0;
  let dropBudget = 0;
  let dropped = 0;

  const forward = (from: Socket, to: Socket, pair: Pair, isReply: boolean) => {
    let chain = Promise.resolve();
    from.on('data', (chunk: Buffer) => {
      if (pair.frozen) return;
      if (isReply && dropBudget > 0 && Date.now() - pair.openedAt >= DROP_MIN_AGE_MS) {
        dropBudget -= 1;
        dropped += 1;
        pair.client.destroy();
        pair.upstream.destroy();
        return;
      }
      if (latency === 0) {
        to.write(chunk);
        return;
      }
      const wait = latency;
      chain = chain.then(
        () =>
          new Promise<void>((resolve) =>
            setTimeout(() => {
              if (!pair.frozen && !to.destroyed) to.write(chunk);
              resolve();
            }, wait),
          ),
      );
    });
  };

  const server: Server = createServer((client) => {
    const upstream = connect({ host: target.host, port: target.port });
    const pair: Pair = { client, upstream, frozen: false, openedAt: Date.now() };
    pairs.add(pair);
    const end = () => {
      if (pair.frozen) return; // a frozen connection stays open on both sides
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
    forward(client, upstream, pair, false);
    forward(upstream, client, pair, true);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get connections() {
      return pairs.size;
    },
    get dropped() {
      return dropped;
    },
    get dropsArmed() {
      return dropBudget;
    },
    setLatency(ms) {
      latency = ms;
    },
    dropReplies(n) {
      dropBudget += n;
    },
    freezeAll() {
      for (const p of pairs) p.frozen = true;
    },
    resetAll() {
      for (const p of [...pairs]) {
        p.frozen = false;
        p.client.destroy();
        p.upstream.destroy();
        pairs.delete(p);
      }
    },
    async close() {
      for (const p of [...pairs]) {
        p.client.destroy();
        p.upstream.destroy();
      }
      pairs.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
