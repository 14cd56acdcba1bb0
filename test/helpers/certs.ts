/**
 * Certificates for TLS tests, made with the `openssl` command in a temp dir: a CA, a server certificate for
 * localhost and 127.0.0.1 (PEM and PKCS#12), client certificates signed by the CA (one valid, one expired),
 * and a second CA nothing trusts. EC P-256 keys keep generation fast.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TestCerts {
  readonly dir: string;
  /** The CA certificate (PEM): what clients trust, and the broker's truststore for client certificates. */
  readonly caPem: string;
  /** Server key and certificate chain in one PEM file (ssl.keystore.type=PEM). */
  readonly serverPem: string;
  readonly serverKey: string;
  readonly serverCert: string;
  /** The same server identity as PKCS#12, with password KEYSTORE_PASSWORD. */
  readonly serverP12: string;
  readonly keystorePassword: string;
  /** Client certificates: subject /C=US/O=floe/CN=<name>. */
  client(name: string, options?: { expired?: boolean; untrusted?: boolean }): { key: string; cert: string; p12: string };
  /** A new server certificate (new key) signed by the same CA, for reload tests. */
  newServerPem(): { pem: string; cert: string };
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export function makeCerts(dir: string): TestCerts {
  const keystorePassword = 'ks-Secret-9f3a';
  openssl(dir, ['req', '-x509', ...EC, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=floe-test-ca']);
  openssl(dir, ['req', '-x509', ...EC, '-keyout', 'other-ca.key', '-out', 'other-ca.pem', '-days', '2', '-subj', '/CN=untrusted-ca']);
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  let serial = 1;
  const sign = (name: string, subject: string, opts: { days?: number; ca?: string; ext?: boolean } = {}) => {
    openssl(dir, ['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
    const ca = opts.ca ?? 'ca';
    openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-set_serial', String(serial++), '-out', `${name}.pem`, '-days', String(opts.days ?? 2), ...(opts.ext ? ['-extfile', 'san.ext'] : [])]);
    return { key: join(dir, `${name}.key`), cert: join(dir, `${name}.pem`) };
  };
  const server = sign('server', '/CN=localhost', { ext: true });
  execFileSync('sh', ['-c', `cat server.key server.pem > server-keystore.pem`], { cwd: dir });
  openssl(dir, ['pkcs12', '-export', '-in', 'server.pem', '-inkey', 'server.key', '-out', 'server.p12', '-passout', `pass:${keystorePassword}`]);
  let generation = 0;
  return {
    dir,
    caPem: join(dir, 'ca.pem'),
    serverPem: join(dir, 'server-keystore.pem'),
    serverKey: server.key,
    serverCert: server.cert,
    serverP12: join(dir, 'server.p12'),
    keystorePassword,
    client(name, options = {}) {
      const file = `client-${name}${options.expired ? '-expired' : ''}${options.untrusted ? '-untrusted' : ''}`;
      const c = sign(file, `/C=US/O=floe/CN=${name}`, { days: options.expired ? -1 : 2, ...(options.untrusted ? { ca: 'other-ca' } : {}) });
      openssl(dir, ['pkcs12', '-export', '-in', c.cert, '-inkey', c.key, '-out', `${file}.p12`, '-passout', `pass:${keystorePassword}`]);
      return { ...c, p12: join(dir, `${file}.p12`) };
    },
    newServerPem() {
      const name = `server-${++generation}`;
      const c = sign(name, `/CN=localhost`, { ext: true });
      execFileSync('sh', ['-c', `cat ${name}.key ${name}.pem > ${name}-keystore.pem`], { cwd: dir });
      return { pem: join(dir, `${name}-keystore.pem`), cert: c.cert };
    },
  };
}
