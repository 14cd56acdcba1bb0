/**
 * Who is on the other end of a connection. Every connection carries a ConnectionSecurity: the listener it
 * came in on, its security protocol and its principal (`User:ANONYMOUS` on PLAINTEXT, `User:<subject DN>`
 * with a verified client certificate, `User:<name>` after SASL). On SASL listeners it also carries the SASL
 * session, which the SaslHandshake and SaslAuthenticate handlers move forward and the gate consults.
 */
import type { SecurityProtocol } from '../config/listeners.js';
import type { SaslServer } from './sasl-mechanism.js';

export const ANONYMOUS = 'User:ANONYMOUS';

export interface SaslSession {
  /**
   * handshake: only ApiVersions and SaslHandshake are allowed; authenticate: a mechanism was chosen and
   * its tokens are exchanged; authenticated: every API is open; failed: the connection closes.
   */
  state: 'handshake' | 'authenticate' | 'authenticated' | 'failed';
  mechanism: string | undefined;
  server: SaslServer | undefined;
  /** SaslHandshake v0: the tokens that follow are raw size-prefixed frames, not SaslAuthenticate requests. */
  rawTokens: boolean;
  /** A re-authentication (KIP-368) is under way: the previous principal stays valid meanwhile. */
  reauthenticating: boolean;
  /** When the session must be renewed (connections.max.reauth.ms), or undefined for never. */
  expiresAtMs: number | undefined;
}

export interface ConnectionSecurity {
  readonly listener: string;
  readonly protocol: SecurityProtocol;
  principal: string;
  readonly sasl: SaslSession | undefined;
  /** Set by a handler whose answer must be the last one (a failed authentication): the connection closes after it. */
  closeAfterResponse: boolean;
}

export function newConnectionSecurity(listener: string, protocol: SecurityProtocol, principal = ANONYMOUS): ConnectionSecurity {
  const sasl: SaslSession | undefined =
    protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL'
      ? { state: 'handshake', mechanism: undefined, server: undefined, rawTokens: false, reauthenticating: false, expiresAtMs: undefined }
      : undefined;
  return { listener, protocol, principal, sasl, closeAfterResponse: false };
}
