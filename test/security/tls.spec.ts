/**
 * TLS with client certificates required (`--tls-auth-clients yes`, certificates made with
 * openssl at test time): the engine's core behaviour over a rediss:// URL combined with TLS
 * material, and over ioredis `tls` options; certificates the server or the client rejects
 * are typed ConnectionErrors whose message and cause name the TLS failure.
 */
import { readFileSync } from 'node:fs';
import { ConnectionError, Queue, type ConnectionInput } from '../../lib/index.js';
import { describeCoreBehaviour } from '../support/core-behaviour.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { makeTestCerts, type TestCerts } from '../support/tls.js';

let certs: TestCerts;
let redis: TestRedis;
let expired: TestRedis;

beforeAll(async () => {
  certs = await makeTestCerts();
  [redis, expired] = await Promise.all([
    startRedis({ tls: { certs } }),
    startRedis({ tls: { certs, serverCert: certs.expiredServer } }),
  ]);
});
afterAll(async () => {
  await Promise.all([redis?.stop(), expired?.stop()]);
  certs?.remove();
});

describeCoreBehaviour('TLS over a rediss:// URL with a client certificate', () => ({
  connection: () => ({ url: redis.url, tls: certs.clientTls() }),
}));
describeCoreBehaviour('TLS over ioredis tls options', () => ({
  connection: () => ({ host: redis.host, port: redis.port, tls: certs.clientTls() }),
}));

describe('certificates that are refused', () => {
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c().catch(() => undefined);
  });
  async function failure(connection: ConnectionInput): Promise<ConnectionError> {
    const q = new Queue('tls', { connection, prefix: uniquePrefix() });
    closers.push(() => q.close());
    const err = await q.add('x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    return err as ConnectionError;
  }

  test('a client certificate from another CA: the server closes the handshake, and the message says so', async () => {
    const err = await failure({
      url: redis.url,
      tls: { ca: readFileSync(certs.caFile), cert: readFileSync(certs.strangerClient.cert), key: readFileSync(certs.strangerClient.key) },
    });
    // Depending on timing the client reads the server's alert or only the reset that follows it.
    expect(err.message).toMatch(/alert unknown ca|closed the TLS connection during the handshake/);
    expect(err.cause).toBeInstanceOf(Error);
  });

  test('no client certificate where one is required', async () => {
    const err = await failure({ url: redis.url, tls: { ca: readFileSync(certs.caFile) } });
    expect(err.message).toMatch(/alert certificate required|closed the TLS connection during the handshake/);
  });

  test('a server certificate the client cannot verify (CA not given): not retryable, cause kept', async () => {
    const err = await failure({ url: redis.url, tls: { cert: readFileSync(certs.client.cert), key: readFileSync(certs.client.key) } });
    expect(err.message).toMatch(/self-signed certificate in certificate chain/);
    expect(err).toMatchObject({ retryable: false, cause: expect.objectContaining({ code: 'SELF_SIGNED_CERT_IN_CHAIN' }) });
  });

  test('an expired server certificate: the message and the cause name the expiry', async () => {
    const err = await failure({ url: expired.url, tls: certs.clientTls() });
    expect(err.message).toMatch(/certificate has expired/);
    expect(err).toMatchObject({ retryable: false, cause: expect.objectContaining({ code: 'CERT_HAS_EXPIRED' }) });
  });

  test('a rediss:// URL with a password and TLS material: the password never shows in an error', async () => {
    const url = `rediss://:s3cret-tls-pw@${expired.host}:${expired.port}`;
    const err = await failure({ url, tls: certs.clientTls() });
    expect(`${err.message} ${String(err.cause)} ${err.stack}`).not.toContain('s3cret-tls-pw');
  });
});
