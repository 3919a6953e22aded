import type { Cluster, Redis, RedisOptions } from 'ioredis';

/**
 * ioredis options, optionally with a `url` (redis://, rediss://) that gives host, port, user,
 * password and db: `{ url: 'rediss://…', tls: { ca, cert, key } }` combines a URL with TLS
 * material. A Sentinel set is `{ sentinels: [{ host, port }], name: '<master set>' }`; relq
 * turns ioredis's `failoverDetector` on unless you set it.
 */
export interface ConnectionOptions extends RedisOptions {
  url?: string;
}

/** A redis:// or rediss:// URL, connection options, or a client you own (relq never closes it). */
export type ConnectionInput = string | ConnectionOptions | Redis | Cluster;
