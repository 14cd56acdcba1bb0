/**
 * OAuth2 client credentials for an external REST catalog, as Iceberg's own clients do it (RESTSessionCatalog
 * with `credential=client_id:client_secret`): a form POST of grant_type=client_credentials, client_id,
 * client_secret and scope to the token endpoint (`oauth2-server-uri`, by default `<catalog>/v1/oauth/tokens`),
 * whose JSON answer carries `access_token` and, usually, `expires_in`. The token is kept and a new one asked
 * for before it expires (at 80 % of its lifetime, at least 10 s before the end), or at once when the catalog
 * answers 401 (`invalidate`). One request at a time: callers waiting for a token share it.
 */
import { CatalogError } from './catalog.js';

export interface ClientCredentialsOptions {
  /** The token endpoint. */
  readonly tokenUri: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Default 'catalog', Iceberg's default scope. */
  readonly scope?: string;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
}

/** `id:secret` -> its two halves (the secret may hold colons); undefined when there is no colon. */
export function parseCredential(credential: string): { clientId: string; clientSecret: string } | undefined {
  const i = credential.indexOf(':');
  if (i <= 0 || i === credential.length - 1) return undefined;
  return { clientId: credential.slice(0, i), clientSecret: credential.slice(i + 1) };
}

export class ClientCredentials {
  private token: { value: string; refreshAt: number } | undefined;
  private pending: Promise<string> | undefined;
  private readonly now: () => number;
  private readonly doFetch: typeof fetch;

  constructor(private readonly options: ClientCredentialsOptions) {
    this.now = options.now ?? Date.now;
    this.doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** A valid access token, asked for when there is none or it is about to expire. */
  async accessToken(): Promise<string> {
    if (this.token !== undefined && this.now() < this.token.refreshAt) return this.token.value;
    this.pending ??= this.fetchToken().finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** Forgets the token (the catalog refused it): the next call asks for a new one. */
  invalidate(): void {
    this.token = undefined;
  }

  private async fetchToken(): Promise<string> {
    const { tokenUri, clientId, clientSecret } = this.options;
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: this.options.scope ?? 'catalog' });
    let res: Response;
    try {
      res = await this.doFetch(tokenUri, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: body.toString() });
    } catch (err) {
      throw new CatalogError('SERVICE_ERROR', `OAuth2 token endpoint ${tokenUri} unreachable: ${err instanceof Error ? err.message : String(err)}; check iceberg.catalog.oauth2.server.uri and that it is up`, { cause: err });
    }
    const text = await res.text();
    let json: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null) json = parsed as Record<string, unknown>;
    } catch {
      // not JSON: reported below
    }
    if (!res.ok || typeof json['access_token'] !== 'string') {
      const why = typeof json['error_description'] === 'string' ? json['error_description'] : typeof json['error'] === 'string' ? json['error'] : `${res.status} ${res.statusText}`;
      const code = res.status === 401 || res.status === 400 || res.status === 403 ? 'NOT_AUTHORIZED' : 'SERVICE_ERROR';
      throw new CatalogError(code, `OAuth2 token endpoint ${tokenUri} refused the client credentials of ${clientId} (${why}); check iceberg.catalog.credential and iceberg.catalog.scope`);
    }
    const lifetimeMs = typeof json['expires_in'] === 'number' && json['expires_in'] > 0 ? json['expires_in'] * 1000 : 3_600_000;
    const refreshIn = Math.max(Math.min(lifetimeMs * 0.8, lifetimeMs - 10_000), lifetimeMs / 2);
    this.token = { value: json['access_token'], refreshAt: this.now() + refreshIn };
    return json['access_token'];
  }
}
