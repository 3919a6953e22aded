/**
 * Throwaway TLS material made with `openssl` at test time: a CA, a server certificate for
 * 127.0.0.1 / localhost, a client certificate, a client certificate from another CA (a
 * server requiring client certificates rejects it) and an expired server certificate.
 * Everything lives in one temp dir that `remove()` deletes.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface CertFiles {
  cert: string;
  key: string;
}

export interface TestCerts {
  dir: string;
  /** PEM file of the CA that signed the server and the good client certificates. */
  caFile: string;
  server: CertFiles;
  client: CertFiles;
  /** Signed by another CA: a server that checks client certificates refuses it. */
  strangerClient: CertFiles;
  /** A server certificate whose validity ended in 2020. */
  expiredServer: CertFiles;
  /** ioredis `tls` options with the good client certificate (file contents). */
  clientTls(): { ca: Buffer; cert: Buffer; key: Buffer };
  remove(): void;
}

async function openssl(dir: string, args: string[]): Promise<void> {
  await run('openssl', args, { cwd: dir, timeout: 30_000 });
}

/** RSA is slow to generate; EC P-256 keys take milliseconds. */
const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

async function makeCa(dir: string, name: string): Promise<void> {
  await openssl(dir, ['req', '-x509', ...NEW_KEY, '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${name}`]);
}

async function makeSigned(dir: string, name: string, ca: string, ext: string): Promise<CertFiles> {
  writeFileSync(join(dir, `${name}.ext`), ext);
  await openssl(dir, ['req', ...NEW_KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  await openssl(dir, [
    // a serial of its own: with -CAcreateserial, certificates signed at once by one CA shared
    // its serial file, and one signing read it half written
    'x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-set_serial', `0x${randomBytes(8).toString('hex')}`,
    '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`,
  ]);
  return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
}

/** `openssl ca` is the one command that sets a start and end date in the past. */
async function makeExpired(dir: string, name: string, ca: string, ext: string): Promise<CertFiles> {
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '1000\n');
  writeFileSync(
    join(dir, 'ca.cnf'),
    [
      '[ ca ]', 'default_ca = test_ca', '[ test_ca ]', `dir = ${dir}`, 'database = $dir/index.txt', 'serial = $dir/serial',
      'new_certs_dir = $dir', 'default_md = sha256', 'policy = any', 'copy_extensions = none', 'unique_subject = no',
      '[ any ]', 'commonName = supplied', '[ ext ]', ext,
    ].join('\n') + '\n',
  );
  await openssl(dir, ['req', ...NEW_KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  await openssl(dir, [
    'ca', '-batch', '-config', 'ca.cnf', '-cert', `${ca}.crt`, '-keyfile', `${ca}.key`, '-in', `${name}.csr`,
    '-out', `${name}.crt`, '-startdate', '20200101000000Z', '-enddate', '20200102000000Z', '-extensions', 'ext', '-notext',
  ]);
  return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
}

export async function makeTestCerts(): Promise<TestCerts> {
  const dir = mkdtempSync(join(tmpdir(), 'relq-tls-'));
  try {
    const serverExt = 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n';
    const clientExt = 'extendedKeyUsage=clientAuth\n';
    await Promise.all([makeCa(dir, 'ca'), makeCa(dir, 'stranger-ca')]);
    const [server, client, strangerClient] = await Promise.all([
      makeSigned(dir, 'server', 'ca', serverExt),
      makeSigned(dir, 'client', 'ca', clientExt),
      makeSigned(dir, 'stranger-client', 'stranger-ca', clientExt),
    ]);
    const expiredServer = await makeExpired(dir, 'expired-server', 'ca', serverExt.trim());
    const caFile = join(dir, 'ca.crt');
    return {
      dir,
      caFile,
      server,
      client,
      strangerClient,
      expiredServer,
      clientTls: () => ({ ca: readFileSync(caFile), cert: readFileSync(client.cert), key: readFileSync(client.key) }),
      remove: () => rmSync(dir, { recursive: true, force: true }),
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
