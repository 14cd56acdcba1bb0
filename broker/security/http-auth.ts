/**
 * Security of the broker's HTTP services (Iceberg REST catalog, schema registry, admin port):
 *
 * - HTTPS with the Kafka listeners' certificate (`ssl.keystore.*` through TlsContext, so a changed keystore
 *   reaches new HTTPS connections too). Client certificates are not asked for on HTTP.
 * - Authentication (`<service>.authentication.method=BASIC`): HTTP Basic with a Floe user (PLAIN users and
 *   SCRAM users, the same as SASL's: SaslAuthenticator.checkPassword), or a bearer token issued by the REST
 *   catalog's OAuth2 endpoint (TokenIssuer), or the catalog's static `iceberg.rest.token`. The principal is
 *   `User:<name>` as on a SASL connection, so the same ACLs apply; a static token names no user and acts as
 *   `User:ANONYMOUS`.
 * - Failures are logged (rate-limited) with the service, the client address and the user name given, never
 *   with a password or token.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { RateLimitedLog } from '../logger.js';
import type { TlsContext, TlsServerOptions } from './tls.js';

export const ANONYMOUS_PRINCIPAL = 'User:ANONYMOUS';
/** The `WWW-Authenticate` challenge of a 401: both schemes the services accept. */
export const HTTP_CHALLENGE = 'Basic realm="floe", charset="UTF-8", Bearer realm="floe"';

export interface PasswordChecker {
  checkPassword(user: string, password: string): boolean;
}

/**
 * Short-lived bearer tokens for authenticated users (OAuth2 client credentials). Random, kept in memory
 * only as their SHA-256, so neither a heap dump of the map nor a restart hands out a usable token.
 */
export class TokenIssuer {
  private readonly tokens = new Map<string, { principal: string; expiresAtMs: number }>();

  constructor(
    private readonly lifetimeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  issue(principal: string): { token: string; expiresInS: number } {
    this.sweep();
    const token = randomBytes(32).toString('base64url');
    this.tokens.set(digest(token), { principal, expiresAtMs: this.now() + this.lifetimeMs });
    return { token, expiresInS: Math.floor(this.lifetimeMs / 1000) };
  }

  /** The principal of a live token; undefined for an unknown or expired one. */
  principalOf(token: string): string | undefined {
    const key = digest(token);
    const t = this.tokens.get(key);
    if (t === undefined) return undefined;
    if (this.now() >= t.expiresAtMs) {
      this.tokens.delete(key);
      return undefined;
    }
    return t.principal;
  }

  get size(): number {
    return this.tokens.size;
  }

  private sweep(): void {
    const now = this.now();
    for (const [k, t] of this.tokens) if (now >= t.expiresAtMs) this.tokens.delete(k);
  }
}

function digest(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('base64');
}

function sameToken(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}

/** Basic credentials from an Authorization header value; undefined when it is not Basic or malformed. */
export function parseBasic(authorization: string): { user: string; password: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(authorization);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Authenticates HTTP requests of one or more services against the broker's users and tokens. */
export class HttpAuthenticator {
  /** Failed authentications since start. */
  failures = 0;

  constructor(
    private readonly passwords: PasswordChecker,
    readonly tokens: TokenIssuer,
    private readonly failureLog: RateLimitedLog,
  ) {}

  /**
   * The principal of an Authorization header for `service`, or undefined (missing or wrong credentials).
   * `staticToken` is a bearer token the service accepts besides issued ones (iceberg.rest.token).
   */
  authenticate(service: string, authorization: string | undefined, remoteAddress: string, staticToken = ''): string | undefined {
    if (authorization === undefined || authorization === '') return undefined;
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (bearer) {
      const token = bearer[1] ?? '';
      const principal = this.tokens.principalOf(token) ?? (staticToken !== '' && sameToken(token, staticToken) ? ANONYMOUS_PRINCIPAL : undefined);
      if (principal === undefined) this.failed(service, remoteAddress, { scheme: 'Bearer' });
      return principal;
    }
    const basic = parseBasic(authorization);
    if (basic !== undefined && this.passwords.checkPassword(basic.user, basic.password)) return `User:${basic.user}`;
    this.failed(service, remoteAddress, basic ? { scheme: 'Basic', user: basic.user } : { scheme: authorization.split(/\s/, 1)[0] ?? '' });
    return undefined;
  }

  /** OAuth2 client credentials: a token for a user whose password is right. */
  issueToken(service: string, user: string, password: string, remoteAddress: string): { token: string; expiresInS: number } | undefined {
    if (!this.passwords.checkPassword(user, password)) {
      this.failed(service, remoteAddress, { scheme: 'client_credentials', user });
      return undefined;
    }
    return this.tokens.issue(`User:${user}`);
  }

  private failed(service: string, remote: string, fields: Readonly<Record<string, string>>): void {
    this.failures++;
    this.failureLog.warn('HTTP authentication failed', { service, remote, ...fields });
  }
}

/**
 * What builds a service's server: node:http, or node:https with the broker's certificate, following its
 * reloads (setSecureContext applies to new connections). Client certificates are not requested on HTTP.
 */
export function httpServerFactory(tls: TlsContext | undefined): (listener: RequestListener) => Server {
  if (tls === undefined) return (listener) => createHttpServer(listener);
  const forHttp = (o: TlsServerOptions) => ({ ...o, requestCert: false, rejectUnauthorized: false });
  return (listener) => {
    const server = createHttpsServer(forHttp(tls.options), listener);
    tls.onReload((o) => server.setSecureContext(forHttp(o)));
    return server;
  };
}
