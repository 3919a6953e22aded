import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import type { Redis } from 'ioredis';
import { redisClient, startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';

/** Clients that never reconnect/queue, so a dead server shows up as a prompt error. */
function strictClient(r: TestRedis, password?: string): Redis {
  return redisClient(r, {
    password,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1000,
    commandTimeout: 1000,
  });
}

/**
 * Close without leaving ioredis' 2 s disconnect timer behind: quit() when ready,
 * nothing when already ended, disconnect() otherwise.
 */
async function close(c: Redis): Promise<void> {
  if (c.status === 'end') return;
  if (c.status === 'ready') {
    await c.quit().catch(() => c.disconnect());
  } else {
    c.disconnect();
  }
}

/** Resolves true if a TCP connection to host:port succeeds. */
function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host, port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Sends inline commands over a raw socket and resolves with the first reply line. */
function rawCommands(host: string, port: number, lines: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = createConnection({ host, port });
    let buf = '';
    s.setEncoding('utf8');
    s.once('connect', () => s.write(lines.map((l) => l + '\r\n').join('')));
    s.on('data', (d: string) => {
      buf += d;
      if (buf.includes('\r\n')) {
        s.destroy();
        resolve(buf.slice(0, buf.indexOf('\r\n')));
      }
    });
    s.once('error', reject);
  });
}

describe('test/support/redis harness (spawned redis-server)', () => {
  let r: TestRedis;
  const clients: Redis[] = [];
  const client = (password?: string) => {
    const c = strictClient(r, password);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    r = await startRedis({ controllable: true });
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map(close));
  });

  afterAll(async () => {
    await r?.stop();
  });

  it('starts a private controllable server that answers PING', async () => {
    expect(r.source).toBe('spawned');
    expect(r.controllable).toBe(true);
    expect(r.host).toBe('127.0.0.1');
    expect(r.url).toBe(`redis://127.0.0.1:${r.port}`);
    expect(r.port).not.toBe(6379);
    const c = client();
    await c.connect();
    expect(await c.ping()).toBe('PONG');
    // no persistence, debug command enabled for local connections
    expect(await c.config('GET', 'save')).toEqual(['save', '']);
    expect(await c.config('GET', 'appendonly')).toEqual(['appendonly', 'no']);
    expect(await c.call('DEBUG', 'SLEEP', '0')).toBe('OK');
  });

  it('kill() makes connections fail, restart() brings it back on the same port (empty)', async () => {
    const c = client();
    await c.connect();
    await c.set('k', 'v');
    const port = r.port;

    await r.kill();
    await expect(c.ping()).rejects.toThrow();
    expect(await canConnect(r.host, port)).toBe(false);

    await r.restart();
    expect(r.port).toBe(port);
    const c2 = client();
    await c2.connect();
    expect(await c2.ping()).toBe('PONG');
    expect(await c2.get('k')).toBeNull(); // no persistence
  });

  it('restart() also works on a running server', async () => {
    const c = client();
    await c.connect();
    await c.set('k2', 'v');
    await r.restart();
    const c2 = client();
    await c2.connect();
    expect(await c2.get('k2')).toBeNull();
  });

  it('pause() stops answering without closing connections; resume() continues', async () => {
    const c = client();
    await c.connect();
    r.pause();
    try {
      await expect(c.ping()).rejects.toThrow(/timed out/i);
    } finally {
      r.resume();
    }
    const c2 = client();
    await c2.connect();
    expect(await c2.ping()).toBe('PONG');
  });

  it('uniquePrefix() differs between calls', () => {
    const seen = new Set(Array.from({ length: 1000 }, () => uniquePrefix()));
    expect(seen.size).toBe(1000);
    for (const p of seen) expect(p).toMatch(/^t[0-9a-z]+$/);
  });
});

describe('startRedis stop()', () => {
  it('stops the server, removes its temp dir, is idempotent, and blocks further control', async () => {
    const r = await startRedis({ controllable: true });
    const c = strictClient(r);
    await c.connect();
    const [, dir] = (await c.config('GET', 'dir')) as [string, string];
    await close(c);
    expect(existsSync(dir)).toBe(true);

    await r.stop();
    expect(existsSync(dir)).toBe(false);
    expect(await canConnect(r.host, r.port)).toBe(false);
    await r.stop(); // idempotent
    await expect(r.restart()).rejects.toThrow(/after stop/);
    expect(() => r.pause()).toThrow(/after stop/);
  });
});

describe('startRedis({ password })', () => {
  let r: TestRedis;
  const clients: Redis[] = [];
  beforeAll(async () => {
    r = await startRedis({ password: 's3cret pass' });
  });
  afterAll(async () => {
    await Promise.all(clients.map(close));
    await r?.stop();
  });

  it('requires AUTH', async () => {
    expect(r.source).toBe('spawned');
    expect(r.password).toBe('s3cret pass');
    expect(r.url).not.toContain('s3cret');

    // Raw RESP, no client magic: without AUTH the server refuses commands.
    expect(await rawCommands(r.host, r.port, ['PING'])).toMatch(/^-NOAUTH/);
    expect(await rawCommands(r.host, r.port, ['AUTH nope', 'PING'])).toMatch(/^-WRONGPASS/);

    const anon = strictClient({ ...r, password: undefined });
    anon.on('error', () => {});
    clients.push(anon);
    await expect(anon.connect().then(() => anon.ping())).rejects.toThrow(/NOAUTH|closed/);

    const wrong = strictClient(r, 'nope');
    wrong.on('error', () => {});
    clients.push(wrong);
    await expect(wrong.connect().then(() => wrong.ping())).rejects.toThrow(/WRONGPASS|closed/);

    const ok = strictClient(r); // redisClient fills in r.password
    clients.push(ok);
    await ok.connect();
    expect(await ok.ping()).toBe('PONG');
  });

  it('restart keeps the password', async () => {
    await r.restart();
    const ok = strictClient(r);
    clients.push(ok);
    await ok.connect();
    expect(await ok.ping()).toBe('PONG');
  });
});

describe('startRedis({ extraArgs })', () => {
  it('passes extra arguments to redis-server', async () => {
    const r = await startRedis({ extraArgs: ['--maxmemory', '12mb'] });
    try {
      const c = strictClient(r);
      await c.connect();
      expect(await c.config('GET', 'maxmemory')).toEqual(['maxmemory', String(12 * 1024 * 1024)]);
      await close(c);
    } finally {
      await r.stop();
    }
  });
});

describe('startRedis() with REDIS_URL', () => {
  const saved = process.env.REDIS_URL;
  afterEach(() => {
    if (saved === undefined) delete process.env.REDIS_URL;
    else process.env.REDIS_URL = saved;
  });

  it('uses REDIS_URL when control is not required, and spawns when it is', async () => {
    const own = await startRedis({ controllable: true });
    try {
      process.env.REDIS_URL = own.url;
      const shared = await startRedis();
      expect(shared.source).toBe('env');
      expect(shared.controllable).toBe(false);
      expect(shared.port).toBe(own.port);
      await expect(shared.kill()).rejects.toThrow(/controllable/);
      expect(() => shared.pause()).toThrow(/controllable/);
      await shared.stop();
      await shared.stop();

      const c = strictClient(shared);
      await c.connect();
      expect(await c.ping()).toBe('PONG'); // stop() of an env server leaves it alone
      await close(c);

      const priv = await startRedis({ controllable: true });
      try {
        expect(priv.source).toBe('spawned');
        expect(priv.port).not.toBe(own.port);
      } finally {
        await priv.stop();
      }
    } finally {
      await own.stop();
    }
  });
});
