/**
 * TLS for SSL and SASL_SSL listeners, from Kafka's ssl.* settings: the server certificate (PKCS#12, or PEM
 * as a file or inline text), the CAs client certificates must chain to, ssl.client.auth and
 * ssl.enabled.protocols. The files are read at start-up (a bad file stops the broker with a message naming
 * the setting) and checked every ssl.reload.check.interval.ms: a changed keystore or truststore applies to
 * new connections without a restart, and one that no longer loads is reported and the old one kept.
 *
 * Passwords are never put into messages: errors name the setting and the file, not the secret.
 */
import { readFileSync, statSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { createSecureContext, type SecureContextOptions, type TLSSocket } from 'node:tls';
import type { BrokerConfig } from '../config/settings.js';
import type { Logger } from '../logger.js';

export class TlsConfigError extends Error {
  readonly code = 'INVALID_TLS_CONFIG';
  constructor(message: string) {
    super(message);
    this.name = 'TlsConfigError';
  }
}

export interface TlsServerOptions extends SecureContextOptions {
  readonly requestCert: boolean;
  readonly rejectUnauthorized: boolean;
}

type TlsSettings = Pick<
  BrokerConfig,
  | 'ssl.keystore.type'
  | 'ssl.keystore.location'
  | 'ssl.keystore.password'
  | 'ssl.key.password'
  | 'ssl.keystore.certificate.chain'
  | 'ssl.keystore.key'
  | 'ssl.truststore.type'
  | 'ssl.truststore.location'
  | 'ssl.truststore.password'
  | 'ssl.truststore.certificates'
  | 'ssl.client.auth'
  | 'ssl.enabled.protocols'
>;

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/g;

function readSetting(key: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new TlsConfigError(`${key} ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); point it at a readable file`);
  }
}

/** Splits PEM text into its private key blocks and certificate blocks. */
function splitPem(text: string): { keys: string[]; certs: string[] } {
  const keys: string[] = [];
  const certs: string[] = [];
  for (const m of text.matchAll(PEM_BLOCK)) {
    if ((m[1] ?? '').endsWith('PRIVATE KEY')) keys.push(m[0]);
    else if (m[1] === 'CERTIFICATE') certs.push(m[0]);
  }
  return { keys, certs };
}

/** The secure-context options of the current files; throws TlsConfigError naming the setting at fault. */
export function loadTlsOptions(s: TlsSettings): TlsServerOptions {
  const protocols = [...s['ssl.enabled.protocols']].sort();
  const base = {
    minVersion: protocols[0] as 'TLSv1.2' | 'TLSv1.3',
    maxVersion: protocols[protocols.length - 1] as 'TLSv1.2' | 'TLSv1.3',
    requestCert: s['ssl.client.auth'] !== 'none',
    rejectUnauthorized: s['ssl.client.auth'] === 'required',
  };
  let identity: SecureContextOptions;
  if (s['ssl.keystore.type'] === 'PKCS12') {
    identity = { pfx: readSetting('ssl.keystore.location', s['ssl.keystore.location']), passphrase: s['ssl.keystore.password'] };
  } else {
    const inline = s['ssl.keystore.key'] !== '';
    const where = inline ? 'ssl.keystore.key and ssl.keystore.certificate.chain' : `ssl.keystore.location ${s['ssl.keystore.location']}`;
    const text = inline ? `${s['ssl.keystore.key']}\n${s['ssl.keystore.certificate.chain']}` : readSetting('ssl.keystore.location', s['ssl.keystore.location']).toString('utf8');
    const { keys, certs } = splitPem(text);
    if (keys.length !== 1) throw new TlsConfigError(`${where}: expected one PEM private key, found ${keys.length}`);
    if (certs.length === 0) throw new TlsConfigError(`${where}: no PEM certificate found; add the server certificate chain`);
    identity = { key: keys[0], cert: certs.join('\n'), ...(s['ssl.key.password'] !== '' ? { passphrase: s['ssl.key.password'] } : {}) };
  }
  let ca: string[] | undefined;
  if (s['ssl.truststore.location'] !== '' || s['ssl.truststore.certificates'] !== '') {
    const text = s['ssl.truststore.certificates'] !== '' ? s['ssl.truststore.certificates'] : readSetting('ssl.truststore.location', s['ssl.truststore.location']).toString('utf8');
    ca = splitPem(text).certs;
    if (ca.length === 0) throw new TlsConfigError(`ssl.truststore.location ${s['ssl.truststore.location']}: no PEM certificate found; the truststore lists the CAs client certificates chain to`);
  }
  const options: TlsServerOptions = { ...base, ...identity, ...(ca ? { ca } : {}) };
  checkContext(options, s);
  return options;
}

/** Builds the context once, so that a wrong password or a key that does not match fails at start-up. */
function checkContext(options: TlsServerOptions, s: TlsSettings): void {
  try {
    // createSecureContext throws on a bad password, a mismatched key or unparsable certificates.
    createSecureContext(options);
  } catch (err) {
    const what = s['ssl.keystore.type'] === 'PKCS12' ? `ssl.keystore.location ${s['ssl.keystore.location']} with ssl.keystore.password` : 'the PEM keystore (ssl.keystore.*, ssl.key.password)';
    // The library's message names the problem (bad decrypt, key mismatch), never the password.
    throw new TlsConfigError(`${what} does not load: ${(err as Error).message}; check the file and its password`);
  }
}


/** The files a TLS configuration reads, whose changes trigger a reload. */
function watchedFiles(s: TlsSettings): string[] {
  return [s['ssl.keystore.location'], s['ssl.truststore.location']].filter((p) => p !== '');
}

function fingerprint(files: readonly string[]): string {
  return files
    .map((f) => {
      try {
        const st = statSync(f);
        return `${f}:${st.mtimeMs}:${st.size}:${st.ino}`;
      } catch {
        return `${f}:missing`;
      }
    })
    .join('|');
}

/**
 * The TLS configuration shared by every TLS listener: the current options, and a timer that reloads them
 * when a file changes and tells each subscriber (a listener's tls.Server) to use the new context.
 */
export class TlsContext {
  private current: TlsServerOptions;
  private stamp: string;
  private timer: NodeJS.Timeout | undefined;
  private readonly subscribers = new Set<(options: TlsServerOptions) => void>();
  /** How many reloads applied since start (tests and the log read it). */
  reloads = 0;

  constructor(
    private readonly settings: TlsSettings,
    private readonly log: Logger,
    checkIntervalMs: number,
  ) {
    this.current = loadTlsOptions(settings);
    this.stamp = fingerprint(watchedFiles(settings));
    if (checkIntervalMs > 0 && watchedFiles(settings).length > 0) {
      this.timer = setInterval(() => this.check(), checkIntervalMs);
      this.timer.unref();
    }
  }

  get options(): TlsServerOptions {
    return this.current;
  }

  onReload(fn: (options: TlsServerOptions) => void): void {
    this.subscribers.add(fn);
  }

  /** Reloads when a watched file changed; keeps the old context when the new files do not load. */
  check(): boolean {
    const stamp = fingerprint(watchedFiles(this.settings));
    if (stamp === this.stamp) return false;
    this.stamp = stamp;
    let next: TlsServerOptions;
    try {
      next = loadTlsOptions(this.settings);
    } catch (err) {
      this.log.error('TLS files changed but do not load; keeping the previous certificates', { err: (err as Error).message });
      return false;
    }
    this.current = next;
    this.reloads++;
    for (const fn of this.subscribers) fn(next);
    this.log.info('TLS certificates reloaded', { files: watchedFiles(this.settings) });
    return true;
  }

  close(): void {
    clearInterval(this.timer);
  }
}

/** RFC 2253 escaping of one attribute value. */
function escapeDnValue(v: string): string {
  return v.replace(/([,+"\\<>;])/g, '\\$1').replace(/^([ #])/, '\\$1').replace(/ $/, '\\ ');
}

/**
 * The principal of a TLS client: `User:<subject DN>` in RFC 2253 order (most specific first, as Java's
 * X500Principal.getName() and so Kafka's default principal builder print it: `User:CN=alice,O=acme,C=US`),
 * or undefined without a verified client certificate.
 */
export function tlsPrincipal(socket: TLSSocket): string | undefined {
  if (!socket.authorized) return undefined;
  const peer = socket.getPeerCertificate(false);
  if (!peer || !peer.raw) return undefined;
  const subject = new X509Certificate(peer.raw).subject; // one attribute per line, in certificate order
  const parts = subject
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const eq = l.indexOf('=');
      return `${l.slice(0, eq)}=${escapeDnValue(l.slice(eq + 1))}`;
    })
    .reverse();
  return `User:${parts.join(',')}`;
}
