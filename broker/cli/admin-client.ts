/**
 * The `floe` CLI's only way to a broker: HTTP to its admin API (broker/admin/api-routes.ts). Errors become
 * CliError with the exit code scripts can rely on (see EXIT).
 */

/** Exit codes of every `floe` command. */
export const EXIT = Object.freeze({
  OK: 0,
  /** The broker refused or failed the operation (a rollback that would lose Kafka data, a bad config value). */
  FAILED: 1,
  /** Bad arguments or usage. */
  USAGE: 2,
  /** No broker answers at the admin URL. */
  UNREACHABLE: 3,
  /** Unknown table, topic, partition or snapshot. */
  NOT_FOUND: 4,
});

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:9644';

export class CliError extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
    /** The API's error code, when the broker answered with one. */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export class AdminClient {
  /** The admin URL without its user and password (error messages show it). */
  readonly baseUrl: string;
  /** `Authorization: Basic` from the URL's user info (admin.authentication.method=BASIC). */
  private readonly authorization: string | undefined;

  constructor(baseUrl: string) {
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new CliError(EXIT.USAGE, `--admin-url ${baseUrl} is not a URL; give one like ${DEFAULT_ADMIN_URL}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(EXIT.USAGE, `--admin-url must be http:// or https://, not ${url.protocol}`);
    // fetch refuses URLs with credentials: they become a Basic header, and leave the URL shown in messages.
    if (url.username !== '' || url.password !== '') {
      this.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
      url.username = '';
      url.password = '';
    }
    this.baseUrl = url.toString().replace(/\/+$/, '');
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  post<T>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  put<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PUT', path, body);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      const headers: Record<string, string> = { ...(this.authorization ? { authorization: this.authorization } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
      res = await fetch(this.baseUrl + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    } catch (err) {
      const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : err instanceof Error ? err.message : String(err);
      throw new CliError(EXIT.UNREACHABLE, `no Floe broker answers at ${this.baseUrl} (${cause}); start one (floe start), or point --admin-url / FLOE_ADMIN_URL at its admin port`);
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch {
      throw new CliError(EXIT.FAILED, `${this.baseUrl}${path} answered HTTP ${res.status} with something other than JSON; is --admin-url the broker's admin port (9644)?`);
    }
    if (res.ok) return parsed as T;
    const e = (parsed ?? {}) as { error?: string; message?: string };
    const message = e.message ?? `HTTP ${res.status}`;
    if (res.status === 404) {
      // A 404 that names no unknown thing: this URL is not a Floe admin API.
      if (e.error === undefined || !e.error.startsWith('unknown_')) throw new CliError(EXIT.FAILED, `${this.baseUrl} has no ${path}; is --admin-url the broker's admin port (9644)?`);
      throw new CliError(EXIT.NOT_FOUND, message, e.error);
    }
    if (res.status === 400 && e.error === 'bad_request') throw new CliError(EXIT.USAGE, message, e.error);
    throw new CliError(EXIT.FAILED, message, e.error);
  }
}
