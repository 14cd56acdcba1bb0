/**
 * SASL on SASL_PLAINTEXT and SASL_SSL listeners, as Kafka's SaslServerAuthenticator runs it:
 * - before authentication only ApiVersions, SaslHandshake and (once a mechanism is chosen) SaslAuthenticate
 *   are served; any other request closes the connection;
 * - after SaslHandshake v0 the client sends raw size-prefixed SASL tokens instead of SaslAuthenticate
 *   requests, and gets raw tokens back;
 * - a failed authentication is answered (SASL_AUTHENTICATION_FAILED, after
 *   connection.failed.authentication.delay.ms) and the connection closed: one failure per connection;
 * - with connections.max.reauth.ms, a session must be renewed (KIP-368) before it expires, or the next
 *   request closes the connection.
 *
 * Users: PLAIN from sasl.plain.jaas.config and sasl.plain.users.file (re-read when it changes), SCRAM from
 * the metadata store (AlterUserScramCredentials).
 */
import { readFileSync, statSync } from 'node:fs';
import type { BrokerConfig } from '../config/settings.js';
import type { Logger } from '../logger.js';
import type { MetadataStore } from '../metadata/metadata-store.js';
import type { ConnectionInfo, FrameHandler } from '../server/connection.js';
import { parsePlainJaas, parsePlainUsersFile, PlainServer, SaslAuthenticationError, sameSecret, type SaslServer } from './sasl-mechanism.js';
import { passwordMatches, SCRAM_MECHANISMS, ScramServer, type ScramMechanism } from './scram.js';
import type { ConnectionSecurity } from './session.js';

export const API_VERSIONS_KEY = 18;
export const SASL_HANDSHAKE_KEY = 17;
export const SASL_AUTHENTICATE_KEY = 36;

export class SaslConfigError extends Error {
  readonly code = 'INVALID_SASL_CONFIG';
  constructor(message: string) {
    super(message);
    this.name = 'SaslConfigError';
  }
}

/** Thrown by the gate: closes the connection (Kafka closes it on a request out of SASL order). */
export class SaslStateError extends Error {
  readonly code = 'ILLEGAL_SASL_STATE';
  constructor(message: string) {
    super(message);
    this.name = 'SaslStateError';
  }
}

type SaslSettings = Pick<BrokerConfig, 'sasl.enabled.mechanisms' | 'sasl.plain.jaas.config' | 'sasl.plain.users.file' | 'connection.failed.authentication.delay.ms' | 'connections.max.reauth.ms'>;

export class SaslAuthenticator {
  readonly mechanisms: readonly string[];
  private readonly jaasUsers: ReadonlyMap<string, string>;
  private fileUsers: ReadonlyMap<string, string> = new Map();
  private fileStamp = '';
  /** Authentications that failed, since start (metrics may read it). */
  failures = 0;
  /** Authentications since start by listener, mechanism and result (floe_sasl_authentications_total). */
  readonly outcomes = new Map<string, { listener: string; mechanism: string; result: 'success' | 'failure'; count: number }>();

  constructor(
    private readonly settings: SaslSettings,
    private readonly metadata: Pick<MetadataStore, 'getScramCredential'>,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.mechanisms = settings['sasl.enabled.mechanisms'];
    try {
      this.jaasUsers = settings['sasl.plain.jaas.config'] === '' ? new Map() : parsePlainJaas(settings['sasl.plain.jaas.config']);
    } catch (err) {
      throw new SaslConfigError((err as Error).message);
    }
    if (settings['sasl.plain.users.file'] !== '') {
      try {
        this.reloadUsersFile();
      } catch (err) {
        throw new SaslConfigError((err as Error).message);
      }
    }
  }

  get failureDelayMs(): number {
    return this.settings['connection.failed.authentication.delay.ms'];
  }

  get reauthMs(): number {
    return this.settings['connections.max.reauth.ms'];
  }

  private reloadUsersFile(): void {
    const path = this.settings['sasl.plain.users.file'];
    let stamp: string;
    try {
      const st = statSync(path);
      stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
    } catch (err) {
      throw new Error(`sasl.plain.users.file ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    if (stamp === this.fileStamp) return;
    this.fileUsers = parsePlainUsersFile(readFileSync(path, 'utf8'), path);
    this.fileStamp = stamp;
  }

  private plainPassword(user: string): string | undefined {
    if (this.settings['sasl.plain.users.file'] !== '') {
      try {
        this.reloadUsersFile();
      } catch (err) {
        this.log.error('PLAIN users file does not load; keeping the previous users', { err: (err as Error).message });
      }
    }
    return this.fileUsers.get(user) ?? this.jaasUsers.get(user);
  }

  /**
   * Whether `password` is `user`'s, for HTTP Basic on the broker's HTTP services: a PLAIN user's password
   * (sasl.plain.jaas.config, sasl.plain.users.file), else one of the user's SCRAM credentials (SHA-512 first).
   * Whatever sasl.enabled.mechanisms says: Basic is not a SASL mechanism, the users are the same.
   */
  checkPassword(user: string, password: string): boolean {
    if (user === '' || password === '') return false;
    const plain = this.plainPassword(user);
    if (plain !== undefined && sameSecret(password, plain)) return true;
    return (['SCRAM-SHA-512', 'SCRAM-SHA-256'] as const).some((m) => {
      const credential = this.metadata.getScramCredential(user, m);
      return credential !== undefined && passwordMatches(m, credential, password);
    });
  }

  /** A server for one exchange of `mechanism`, or undefined when it is not enabled. */
  serverFor(mechanism: string): SaslServer | undefined {
    if (!this.mechanisms.includes(mechanism)) return undefined;
    if (mechanism === 'PLAIN') return new PlainServer((u) => this.plainPassword(u));
    if (mechanism in SCRAM_MECHANISMS) {
      const m = mechanism as ScramMechanism;
      return new ScramServer(m, (u) => this.metadata.getScramCredential(u, m));
    }
    return undefined;
  }

  /** Starts an exchange after SaslHandshake; false when the mechanism is not enabled. */
  begin(security: ConnectionSecurity, mechanism: string, apiVersion: number): boolean {
    const session = security.sasl;
    if (!session) return false;
    const server = this.serverFor(mechanism);
    if (!server) return false;
    session.reauthenticating = session.state === 'authenticated';
    session.state = 'authenticate';
    session.mechanism = mechanism;
    session.server = server;
    session.rawTokens = apiVersion === 0;
    return true;
  }

  /**
   * One token of the chosen mechanism. Resolves to the token to send back and whether the exchange is
   * complete; rejects with SaslAuthenticationError (after the failure delay), leaving the session failed.
   */
  async step(security: ConnectionSecurity, token: Buffer, conn: ConnectionInfo): Promise<{ response: Buffer; done: boolean; sessionLifetimeMs: number }> {
    const session = security.sasl;
    if (!session?.server || session.state !== 'authenticate') throw new SaslStateError('no SASL exchange is under way');
    try {
      const { response, done } = session.server.step(token);
      if (!done) return { response, done, sessionLifetimeMs: 0 };
      const principal = `User:${session.server.principal ?? ''}`;
      if (session.reauthenticating && principal !== security.principal) throw new SaslAuthenticationError('re-authentication may not change the principal');
      security.principal = principal;
      session.state = 'authenticated';
      const reauthenticated = session.reauthenticating;
      session.reauthenticating = false;
      session.server = undefined;
      session.expiresAtMs = this.reauthMs > 0 ? this.now() + this.reauthMs : undefined;
      this.count(security.listener, session.mechanism, 'success');
      this.log.debug('SASL authentication succeeded', { conn: conn.id, remote: conn.remoteAddress, principal, mechanism: session.mechanism, reauthenticated });
      return { response, done, sessionLifetimeMs: this.reauthMs };
    } catch (err) {
      session.state = 'failed';
      session.server = undefined;
      this.failures++;
      this.count(security.listener, session.mechanism, 'failure');
      // The reason goes to the debug log only; it never holds the password (mechanisms do not put it there).
      this.log.info('SASL authentication failed', { conn: conn.id, remote: conn.remoteAddress, mechanism: session.mechanism, reason: err instanceof SaslAuthenticationError ? err.message : 'internal error' });
      if (this.failureDelayMs > 0) await new Promise((r) => setTimeout(r, this.failureDelayMs));
      throw err instanceof SaslAuthenticationError ? err : new SaslAuthenticationError('internal error');
    }
  }

  private count(listener: string, mechanism: string | undefined, result: 'success' | 'failure'): void {
    const m = mechanism ?? 'unknown';
    const key = `${listener}\u0000${m}\u0000${result}`;
    const o = this.outcomes.get(key);
    if (o !== undefined) o.count++;
    else this.outcomes.set(key, { listener, mechanism: m, result, count: 1 });
  }

  /** The message clients get for a failed authentication: the same whatever the reason, as Kafka answers. */
  static failureMessage(mechanism: string | undefined): string {
    return `Authentication failed during authentication due to invalid credentials with SASL mechanism ${mechanism ?? 'unknown'}`;
  }

  /**
   * Wraps the router's frame handler for a SASL listener: refuses requests out of SASL order, expired
   * sessions, and carries the raw tokens of SaslHandshake v0.
   */
  gate(inner: FrameHandler): FrameHandler {
    return (frame, conn) => {
      const security = conn.security;
      const session = security.sasl;
      if (!session) return inner(frame, conn);
      if (session.state === 'authenticate' && session.rawTokens) return this.rawToken(frame, conn);
      if (session.state === 'authenticated' || session.reauthenticating) {
        if (session.expiresAtMs !== undefined && this.now() > session.expiresAtMs && !session.reauthenticating) {
          const apiKey = frame.length >= 2 ? frame.readInt16BE(0) : -1;
          if (apiKey !== SASL_HANDSHAKE_KEY && apiKey !== SASL_AUTHENTICATE_KEY) {
            throw new SaslStateError(`SASL session of ${security.principal} expired (connections.max.reauth.ms); the client must re-authenticate`);
          }
        }
        return inner(frame, conn);
      }
      if (session.state === 'failed') throw new SaslStateError('authentication failed on this connection');
      const apiKey = frame.length >= 2 ? frame.readInt16BE(0) : -1;
      const allowed = apiKey === API_VERSIONS_KEY || apiKey === SASL_HANDSHAKE_KEY || (apiKey === SASL_AUTHENTICATE_KEY && session.state === 'authenticate');
      if (!allowed) throw new SaslStateError(`unexpected request (API ${apiKey}) before SASL authentication; closing the connection`);
      return inner(frame, conn);
    };
  }

  /** A raw SASL token after SaslHandshake v0: the answer is a size-prefixed raw token; a failure closes. */
  private async rawToken(frame: Buffer, conn: ConnectionInfo): Promise<Buffer> {
    const { response } = await this.step(conn.security, frame, conn);
    const out = Buffer.alloc(4 + response.length);
    out.writeInt32BE(response.length, 0);
    response.copy(out, 4);
    return out;
  }
}

