/**
 * SaslHandshake (17): the client names a mechanism. On a SASL listener before authentication (or, with
 * connections.max.reauth.ms, to re-authenticate) an enabled mechanism starts the exchange; v0 means the
 * tokens follow as raw frames. An unknown mechanism gets UNSUPPORTED_SASL_MECHANISM and the connection
 * closes; a handshake where none is expected gets ILLEGAL_SASL_STATE, as in Kafka.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { SaslAuthenticator } from '../security/sasl-authenticator.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

export class SaslHandshakeHandler implements ApiHandler {
  readonly apiKey = 17;
  readonly minVersion = 0;
  readonly maxVersion = 1;

  constructor(private readonly sasl: SaslAuthenticator | undefined) {}

  handle(body: Body, ctx: HandlerContext): Body {
    const security = ctx.conn.security;
    const session = security.sasl;
    const mechanisms = [...(this.sasl?.mechanisms ?? [])];
    const reauth = session?.state === 'authenticated' && (this.sasl?.reauthMs ?? 0) > 0 && ctx.apiVersion >= 1;
    if (!this.sasl || !session || (session.state !== 'handshake' && !reauth)) {
      // In the middle of an exchange Kafka's authenticator drops the connection; after it, it only answers.
      if (session?.state === 'authenticate') security.closeAfterResponse = true;
      return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms };
    }
    const mechanism = String(body.mechanism);
    if (!this.sasl.begin(security, mechanism, ctx.apiVersion)) {
      security.closeAfterResponse = true;
      return { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms };
    }
    return { errorCode: ErrorCode.NONE, mechanisms };
  }
}
