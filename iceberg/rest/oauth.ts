/**
 * The REST spec's OAuth2 token endpoint (`POST /v1/oauth/tokens`, RFC 6749 client credentials) as Iceberg
 * clients call it: pyiceberg `credential="id:secret"` and Spark/Java `credential` send
 * `grant_type=client_credentials` as a form body, with the client id and secret either in the body
 * (`client_id`, `client_secret`) or as HTTP Basic (RFC 6749 2.3.1). The answer is
 * `{access_token, token_type: "bearer", expires_in, issued_token_type}`; errors are RFC 6749 5.2's
 * `{error, error_description}` (400, or 401 `invalid_client` with `WWW-Authenticate`).
 *
 * Who the client is and what a token means belong to the caller (`RestAuth.issueToken`): this file parses
 * and answers only.
 */
import { RestRequestError } from './errors.js';

export const OAUTH_TOKENS_PATH = '/v1/oauth/tokens';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** An RFC 6749 error answer; the server writes it as `{error, error_description}`. */
export class OAuthError extends RestRequestError {
  constructor(
    status: 400 | 401,
    readonly oauthError: 'invalid_request' | 'invalid_client' | 'unsupported_grant_type',
    message: string,
  ) {
    super(status, oauthError, message, status === 401 ? { 'www-authenticate': 'Basic realm="iceberg"' } : {});
    this.name = 'OAuthError';
  }
}

export interface ClientCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
}

/** The client credentials of a token request (form body and Authorization header). */
export function parseTokenRequest(contentType: string | undefined, body: string, authorization: string | undefined): ClientCredentials {
  if (contentType !== undefined && !/^application\/x-www-form-urlencoded\b/i.test(contentType)) {
    throw new OAuthError(400, 'invalid_request', 'Send the token request as application/x-www-form-urlencoded (RFC 6749 4.4.2)');
  }
  const form = new URLSearchParams(body);
  const grant = form.get('grant_type');
  if (grant !== 'client_credentials') {
    throw new OAuthError(400, grant === null ? 'invalid_request' : 'unsupported_grant_type', 'Only grant_type=client_credentials is supported: send client_id and client_secret of a Floe user');
  }
  const basic = /^Basic\s+(\S+)$/i.exec(authorization ?? '');
  if (basic) {
    const decoded = Buffer.from(basic[1] ?? '', 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthError(401, 'invalid_client', 'The Basic client credentials are malformed: expected base64(client_id:client_secret)');
    // RFC 6749 2.3.1: both parts are form-urlencoded before being joined.
    return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
  }
  const clientId = form.get('client_id') ?? '';
  const clientSecret = form.get('client_secret') ?? '';
  if (clientId === '' || clientSecret === '') throw new OAuthError(401, 'invalid_client', 'Client authentication needed: send client_id and client_secret (a Floe user and password)');
  return { clientId, clientSecret };
}

function formDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

export function tokenResponse(token: string, expiresInS: number): Record<string, string | number> {
  return { access_token: token, token_type: 'bearer', expires_in: expiresInS, issued_token_type: ACCESS_TOKEN_TYPE };
}
