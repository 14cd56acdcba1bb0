/**
 * SaslAuthenticate (36): one token of the mechanism chosen by SaslHandshake v1. A failure is answered with
 * SASL_AUTHENTICATION_FAILED and one fixed message (never the reason, never the password) and the
 * connection closes after the answer. v1+ tells the client its session lifetime (connections.max.reauth.ms).
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { SaslAuthenticator } from '../security/sasl-authenticator.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

export class SaslAuthenticateHandler implements ApiHandler {
  readonly apiKey = 36;
  readonly minVersion = 0;
  readonly maxVersion = 2;

  constructor(private readonly sasl: SaslAuthenticator | undefined) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const security = ctx.conn.security;
    const session = security.sasl;
    if (!this.sasl || !session || session.state !== 'authenticate' || session.rawTokens) {
      if (session) security.closeAfterResponse = true;
      return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, errorMessage: 'SaslAuthenticate is allowed only after a SaslHandshake v1 on a SASL listener.', authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n };
    }
    const mechanism = session.mechanism;
    try {
      const { response, sessionLifetimeMs } = await this.sasl.step(security, body.authBytes as Buffer, ctx.conn);
      return { errorCode: ErrorCode.NONE, errorMessage: null, authBytes: response, sessionLifetimeMs: BigInt(sessionLifetimeMs) };
    } catch {
      security.closeAfterResponse = true;
      return { errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: SaslAuthenticator.failureMessage(mechanism), authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n };
    }
  }
}
