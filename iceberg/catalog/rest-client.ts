/**
 * A `Catalog` backed by an external Iceberg REST catalog (Polaris, Nessie, Gravitino, Unity, Glue's REST
 * endpoint, Floe's own server, ...), so Floe's tables can be registered in a user's system-of-record catalog.
 * Speaks `../shared/iceberg/rest-catalog-open-api.yaml` with `fetch`: reads `/v1/config` first (prefix and
 * endpoints), pages through lists, keeps 64-bit ids exact, and maps the spec's error bodies back to
 * `CatalogError` codes; a 409 CommitFailedException becomes `CommitConflictError`, so `commitWithRetry`
 * reloads and retries exactly as with the built-in catalog.
 */
import { ClientCredentials } from './oauth2.js';
import { SigV4Signer, type SigV4Options } from './sigv4.js';
import { parseJson, stringifyJson, isJsonObject, type JsonValue } from '../json.js';
import { CommitConflictError, type TableRequirement, type TableUpdate } from '../table-metadata-builder.js';
import {
  createTableRequestToJson,
  identifierToJson,
  parseCommitTableResult,
  parseLoadTableResult,
  tableRequirementToJson,
  tableUpdateToJson,
} from '../rest/messages.js';
import {
  CatalogError,
  checkIdentifier,
  checkNamespace,
  type Catalog,
  type CatalogErrorCode,
  type CommitTableResult,
  type CreateTableRequest,
  type LoadTableResult,
  type Namespace,
  type TableIdentifier,
} from './catalog.js';

export interface RestCatalogClientOptions {
  /** Base URI of the catalog, e.g. `http://catalog:8181` (the `/v1` paths are appended). */
  readonly uri: string;
  /** Bearer token sent with every request. */
  readonly token?: string;
  /**
   * OAuth2 client credentials (instead of `token`): a token is fetched from `oauth2ServerUri` (default
   * `<uri>/v1/oauth/tokens`) and renewed before it expires or when the catalog answers 401 (see oauth2.ts).
   */
  readonly credential?: { readonly clientId: string; readonly clientSecret: string; readonly oauth2ServerUri?: string; readonly scope?: string };
  /** Warehouse to ask for in `GET /v1/config?warehouse=`. */
  readonly warehouse?: string;
  /** Path prefix; default: the one the server's config announces. */
  readonly prefix?: string;
  /** Catalog name for messages. Default 'rest'. */
  readonly name?: string;
  /** Extra headers (e.g. a tenant id). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Signs every request with AWS Signature Version 4 (Glue's and S3 Tables' REST endpoints; see sigv4.ts). A
   * bearer token (`token`, `credential`) is then sent as `Original-Authorization`.
   */
  readonly sigv4?: SigV4Options;
  /** Replaces globalThis.fetch. */
  readonly fetch?: typeof fetch;
  /** A request unanswered after this long fails (SERVICE_ERROR; a commit's outcome is then unknown). Default 30 s. */
  readonly timeoutMs?: number;
}

const SEP = '\u001f';

const BY_TYPE: Record<string, CatalogErrorCode> = {
  NoSuchNamespaceException: 'NO_SUCH_NAMESPACE',
  NoSuchTableException: 'NO_SUCH_TABLE',
  AlreadyExistsException: 'ALREADY_EXISTS',
  NamespaceNotEmptyException: 'NAMESPACE_NOT_EMPTY',
  ForbiddenException: 'FORBIDDEN',
  NotAuthorizedException: 'NOT_AUTHORIZED',
  CommitStateUnknownException: 'COMMIT_STATE_UNKNOWN',
  UnsupportedOperationException: 'UNSUPPORTED',
  BadRequestException: 'INVALID_REQUEST',
  IllegalArgumentException: 'INVALID_REQUEST',
  ValidationException: 'INVALID_REQUEST',
};

function codeForStatus(status: number): CatalogErrorCode {
  if (status === 400 || status === 422) return 'INVALID_REQUEST';
  if (status === 401 || status === 419) return 'NOT_AUTHORIZED';
  if (status === 403) return 'FORBIDDEN';
  if (status === 406) return 'UNSUPPORTED';
  return 'SERVICE_ERROR';
}

interface Config {
  readonly prefix: string;
  readonly endpoints: ReadonlySet<string> | undefined;
}

/** The request's headers with its SigV4 signature (signed anew for each try: the signature carries the time). */
async function signRequest(signer: SigV4Signer, method: string, url: string, headers: Record<string, string>, payload: string | undefined, what: string): Promise<Record<string, string>> {
  try {
    return await signer.sign(method, url, headers, payload);
  } catch (err) {
    if (err instanceof CatalogError) throw err;
    throw new CatalogError('NOT_AUTHORIZED', `REST catalog ${what}: cannot sign the request with SigV4: ${err instanceof Error ? err.message : String(err)}; check iceberg.catalog.signing.region and the AWS credentials`, { cause: err });
  }
}

export class RestCatalogClient implements Catalog {
  readonly name: string;
  private readonly options: RestCatalogClientOptions;
  private readonly base: string;
  private readonly doFetch: typeof fetch;
  private config: Promise<Config> | undefined;
  private readonly oauth: ClientCredentials | undefined;
  private readonly signer: SigV4Signer | undefined;

  constructor(options: RestCatalogClientOptions) {
    this.options = options;
    this.name = options.name ?? 'rest';
    this.base = options.uri.replace(/\/+$/, '');
    this.doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    const c = options.credential;
    this.oauth = c === undefined ? undefined : new ClientCredentials({
      tokenUri: c.oauth2ServerUri ?? `${this.base}/v1/oauth/tokens`,
      clientId: c.clientId,
      clientSecret: c.clientSecret,
      ...(c.scope !== undefined ? { scope: c.scope } : {}),
      fetch: this.doFetch,
    });
    this.signer = options.sigv4 === undefined ? undefined : new SigV4Signer(options.sigv4);
  }

  /** The server's configuration (fetched once): the prefix in use and the endpoints it announced. */
  private loadConfig(): Promise<Config> {
    this.config ??= (async () => {
      const q = this.options.warehouse ? `?warehouse=${encodeURIComponent(this.options.warehouse)}` : '';
      const json = await this.request('GET', `/v1/config${q}`, undefined, 'config');
      const o = isJsonObject(json) ? json : {};
      const pick = (k: string): string | undefined => {
        for (const src of [o['overrides'], o['defaults']]) if (isJsonObject(src) && typeof src[k] === 'string') return src[k] as string;
        return undefined;
      };
      const prefix = this.options.prefix ?? pick('prefix') ?? '';
      const endpoints = Array.isArray(o['endpoints']) ? new Set(o['endpoints'].filter((e): e is string => typeof e === 'string')) : undefined;
      return { prefix: prefix.replace(/^\/+|\/+$/g, ''), endpoints };
    })().catch((err: unknown) => {
      this.config = undefined;
      throw err;
    });
    return this.config;
  }

  private async path(rest: string): Promise<string> {
    const { prefix } = await this.loadConfig();
    return prefix === '' ? `/v1/${rest}` : `/v1/${prefix.split('/').map(encodeURIComponent).join('/')}/${rest}`;
  }

  private nsPath(ns: Namespace): string {
    return encodeURIComponent(ns.join(SEP));
  }

  private tablePath(id: TableIdentifier): string {
    return `namespaces/${this.nsPath(id.namespace)}/tables/${encodeURIComponent(id.name)}`;
  }

  /** Sends a request; returns the parsed body (undefined for 204/HEAD) or throws the mapped error. */
  private async request(method: string, path: string, body: JsonValue | undefined, what: string, conflict?: readonly TableRequirement[]): Promise<JsonValue | undefined> {
    const payload = body !== undefined ? stringifyJson(body) : undefined;
    const url = `${this.base}${path}`;
    const send = async (): Promise<Response> => {
      let headers: Record<string, string> = { accept: 'application/json', ...(this.options.headers ?? {}) };
      const token = this.oauth !== undefined ? await this.oauth.accessToken() : this.options.token;
      if (token) headers['authorization'] = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (this.signer !== undefined) headers = await signRequest(this.signer, method, url, headers, payload, what);
      try {
        return await this.doFetch(url, { method, headers, signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000), ...(payload !== undefined ? { body: payload } : {}) });
      } catch (err) {
        throw new CatalogError('SERVICE_ERROR', `REST catalog ${this.base} unreachable for ${what}: ${err instanceof Error ? err.message : String(err)}; check the URI and that the catalog is up`, { cause: err });
      }
    };
    let res = await send();
    if (res.status === 401 && this.oauth !== undefined) {
      // The token expired or was revoked early: one more try with a fresh one.
      await res.body?.cancel();
      this.oauth.invalidate();
      res = await send();
    }
    const text = method === 'HEAD' ? '' : await res.text();
    if (res.ok) return text === '' ? undefined : parseJson(text);
    let type = '';
    let message = `${res.status} ${res.statusText}`;
    if (text !== '') {
      try {
        const j = parseJson(text);
        const e = isJsonObject(j) && isJsonObject(j['error']) ? j['error'] : undefined;
        if (e && typeof e['type'] === 'string') type = e['type'];
        if (e && typeof e['message'] === 'string') message = e['message'];
        // AWS endpoints (and API Gateway) answer a refused signature with {"message": ...} of their own.
        const aws = isJsonObject(j) ? j['message'] ?? j['Message'] : undefined;
        if (e === undefined && typeof aws === 'string') message = `${message}: ${aws}`;
      } catch {
        message = `${message}: ${text.slice(0, 200)}`;
      }
    }
    if (res.status === 409 && (type === 'CommitFailedException' || (type === '' && conflict))) {
      throw new CommitConflictError(conflict?.[0] ?? { type: 'assert-create' }, `REST catalog refused the commit: ${message}`);
    }
    if (res.status === 404 && type === '' && method === 'HEAD') throw new CatalogError('NO_SUCH_TABLE', `${what}: not found`);
    const code = BY_TYPE[type] ?? (res.status === 409 ? 'ALREADY_EXISTS' : codeForStatus(res.status));
    const hint = this.signer !== undefined && (res.status === 403 || res.status === 401) ? '; check the SigV4 settings: iceberg.catalog.access.key.id, iceberg.catalog.secret.access.key (or the AWS credential chain), iceberg.catalog.signing.region and iceberg.catalog.signing.name' : '';
    throw new CatalogError(code, `REST catalog ${what} failed (${res.status}${type ? ` ${type}` : ''}): ${message}${hint}`);
  }

  private async list<T>(path: string, key: string, what: string, map: (v: JsonValue) => T): Promise<T[]> {
    const out: T[] = [];
    let token: string | undefined;
    for (let page = 0; page < 100_000; page++) {
      const sep = path.includes('?') ? '&' : '?';
      const json = await this.request('GET', token === undefined ? path : `${path}${sep}pageToken=${encodeURIComponent(token)}`, undefined, what);
      if (!isJsonObject(json) || !Array.isArray(json[key])) throw new CatalogError('SERVICE_ERROR', `REST catalog ${what}: response lacks '${key}'`);
      for (const v of json[key] as JsonValue[]) out.push(map(v));
      const next = json['next-page-token'];
      if (typeof next !== 'string' || next === '') return out;
      token = next;
    }
    return out;
  }

  async listNamespaces(parent: Namespace = []): Promise<Namespace[]> {
    const q = parent.length > 0 ? `?parent=${encodeURIComponent(parent.join(SEP))}` : '';
    return this.list(await this.path(`namespaces${q}`), 'namespaces', 'list namespaces', (v) => {
      if (!Array.isArray(v)) throw new CatalogError('SERVICE_ERROR', 'REST catalog listed a namespace that is not a list');
      return v.map(String);
    });
  }

  async createNamespace(ns: Namespace, properties: Readonly<Record<string, string>> = {}): Promise<void> {
    checkNamespace(ns);
    await this.request('POST', await this.path('namespaces'), { namespace: [...ns], properties: { ...properties } }, `create namespace ${ns.join('.')}`);
  }

  async loadNamespaceProperties(ns: Namespace): Promise<Record<string, string>> {
    checkNamespace(ns);
    const json = await this.request('GET', await this.path(`namespaces/${this.nsPath(ns)}`), undefined, `load namespace ${ns.join('.')}`);
    const props = isJsonObject(json) && isJsonObject(json['properties']) ? json['properties'] : {};
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(props)) if (typeof v === 'string') out[k] = v;
    return out;
  }

  async namespaceExists(ns: Namespace): Promise<boolean> {
    checkNamespace(ns);
    return this.exists(await this.path(`namespaces/${this.nsPath(ns)}`), `namespace ${ns.join('.')}`);
  }

  async dropNamespace(ns: Namespace): Promise<void> {
    checkNamespace(ns);
    await this.request('DELETE', await this.path(`namespaces/${this.nsPath(ns)}`), undefined, `drop namespace ${ns.join('.')}`);
  }

  async listTables(ns: Namespace): Promise<TableIdentifier[]> {
    checkNamespace(ns);
    return this.list(await this.path(`namespaces/${this.nsPath(ns)}/tables`), 'identifiers', `list tables of ${ns.join('.')}`, (v) => {
      if (!isJsonObject(v) || !Array.isArray(v['namespace']) || typeof v['name'] !== 'string') {
        throw new CatalogError('SERVICE_ERROR', 'REST catalog listed a table identifier without namespace and name');
      }
      return { namespace: v['namespace'].map(String), name: v['name'] };
    });
  }

  async createTable(id: TableIdentifier, request: CreateTableRequest): Promise<LoadTableResult> {
    checkIdentifier(id);
    const json = await this.request('POST', await this.path(`namespaces/${this.nsPath(id.namespace)}/tables`), createTableRequestToJson(id.name, request), `create table ${id.name}`);
    return parseLoadTableResult(json);
  }

  async registerTable(id: TableIdentifier, metadataLocation: string): Promise<LoadTableResult> {
    checkIdentifier(id);
    const body = { name: id.name, 'metadata-location': metadataLocation };
    return parseLoadTableResult(await this.request('POST', await this.path(`namespaces/${this.nsPath(id.namespace)}/register`), body, `register table ${id.name}`));
  }

  async loadTable(id: TableIdentifier): Promise<LoadTableResult> {
    checkIdentifier(id);
    return parseLoadTableResult(await this.request('GET', await this.path(this.tablePath(id)), undefined, `load table ${id.name}`));
  }

  async tableExists(id: TableIdentifier): Promise<boolean> {
    checkIdentifier(id);
    return this.exists(await this.path(this.tablePath(id)), `table ${id.name}`);
  }

  async dropTable(id: TableIdentifier, options: { purge?: boolean } = {}): Promise<void> {
    checkIdentifier(id);
    await this.request('DELETE', await this.path(`${this.tablePath(id)}?purgeRequested=${options.purge ? 'true' : 'false'}`), undefined, `drop table ${id.name}`);
  }

  async commitTable(id: TableIdentifier, requirements: readonly TableRequirement[], updates: readonly TableUpdate[]): Promise<CommitTableResult> {
    checkIdentifier(id);
    const body = {
      identifier: identifierToJson(id),
      requirements: requirements.map(tableRequirementToJson),
      updates: updates.map(tableUpdateToJson),
    };
    return parseCommitTableResult(await this.request('POST', await this.path(this.tablePath(id)), body, `commit to table ${id.name}`, requirements));
  }

  async close(): Promise<void> {
    this.config = undefined;
  }

  private async exists(path: string, what: string): Promise<boolean> {
    try {
      await this.request('HEAD', path, undefined, what);
      return true;
    } catch (err) {
      if (err instanceof CatalogError && (err.code === 'NO_SUCH_TABLE' || err.code === 'NO_SUCH_NAMESPACE')) return false;
      throw err;
    }
  }
}
