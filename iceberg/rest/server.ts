/**
 * The Iceberg REST catalog server (node:http, default port 8181), serving any `Catalog` per
 * `../shared/iceberg/rest-catalog-open-api.yaml`:
 *
 * - `GET /v1/config` with `defaults`, `overrides` (`prefix`, `warehouse` when set) and `endpoints`, the list
 *   of every route below, so clients never call something that isn't there.
 * - Namespaces: list (`?parent=`), create, load, exists (HEAD), drop. Tables: list, create, register, load (with
 *   `metadata-location`, `metadata` and `config`, where storage settings such as `s3.endpoint` go), exists
 *   (HEAD), commit, drop. Multi-level namespaces are joined with the unit separator (`%1F`) in paths.
 * - Errors are `{"error": {"message", "type", "code"}}`; unknown routes 404, wrong methods 405 (with
 *   `Allow`), malformed bodies 400, missing or wrong bearer token 401 when a token is configured.
 * - With `auth` (the broker passes its users and ACLs in; this folder knows neither): every request but the
 *   OAuth2 token endpoint (`POST /v1/oauth/tokens`, oauth.ts) needs credentials `auth.authenticate` accepts
 *   (401 with `WWW-Authenticate` otherwise); table lists leave out what `auth.mayDescribe` refuses, and
 *   loading a table `auth.mayLoad` refuses is 403 ForbiddenException.
 * - HTTPS: pass a `createServer` that builds a node:https server (the broker's does, with its certificates).
 * - Tables that Floe owns (property `floe.owner` set, or `isReadOnly` says so) are read-only to outside
 *   writers: commits and drops are answered 403 ForbiddenException. Not 409: reference clients treat 409
 *   CommitFailedException as "refresh and retry", so a 409 would send Spark or pyiceberg into a retry loop
 *   for a commit that can never succeed; 403 is final and its message says why.
 */
import { createServer as createHttpServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { parseJson, stringifyJson, type JsonValue } from '../json.js';
import type { TableMetadata } from '../table-metadata.js';
import { CatalogError, identifierToString, type Catalog, type Namespace, type TableIdentifier } from '../catalog/catalog.js';
import { errorBody, RestRequestError, toRestError } from './errors.js';
import { OAUTH_TOKENS_PATH, OAuthError, parseTokenRequest, tokenResponse } from './oauth.js';
import { commitTableResultToJson, identifierToJson, loadTableResultToJson, parseCommitTableRequest, parseCreateTableRequest } from './messages.js';

/** Table property naming the Floe component that owns a table; such tables refuse outside commits. */
export const FLOE_OWNER_PROPERTY = 'floe.owner';
export const DEFAULT_REST_PORT = 8181;
const NS_SEPARATOR = '\u001f';

export interface RestCatalogServerOptions {
  readonly catalog: Catalog;
  /** Default 0.0.0.0 (engines usually run elsewhere); tests use 127.0.0.1. */
  readonly host?: string;
  /** Default 8181; 0 picks a free port. */
  readonly port?: number;
  /** Optional path prefix: routes become `/v1/<prefix>/...`, announced in the config's overrides. */
  readonly prefix?: string;
  /** When set, every request needs `Authorization: Bearer <token>`. */
  readonly token?: string;
  /** Warehouse announced in the config overrides. */
  readonly warehouse?: string;
  /** Storage settings for engines added to every table's `config` (e.g. `s3.endpoint`, `s3.path-style-access`, `s3.region`). */
  readonly tableConfig?: Readonly<Record<string, string>>;
  /** Whether outside writers must not change the table. Default: the table has the `floe.owner` property. */
  readonly isReadOnly?: (id: TableIdentifier, metadata: TableMetadata) => boolean;
  /**
   * Table properties outside writers may still set or remove on a read-only table (a commit of only such
   * property changes), e.g. its maintenance settings. Default: none.
   */
  readonly settableWhenReadOnly?: (key: string) => boolean;
  /** Largest request body accepted. Default 16 MiB. */
  readonly maxBodyBytes?: number;
  /** Builds the server from the request listener, e.g. a node:https server for TLS. Default: node:http. */
  readonly createServer?: (listener: RequestListener) => Server;
  /** Authentication and table-level authorization; with it, `token` is not checked by the server itself. */
  readonly auth?: RestAuth;
}

/** Who sent a request: the principal its credentials name and the address it came from. */
export interface RestCaller {
  readonly principal: string;
  readonly remoteAddress: string;
}

/** How the server authenticates requests and decides which tables a caller may see and load. */
export interface RestAuth {
  /** The principal of a request's `Authorization` header; undefined for missing or wrong credentials (401). */
  authenticate(authorization: string | undefined, remoteAddress: string): string | undefined;
  /** The `WWW-Authenticate` challenge of a 401. */
  readonly challenge: string;
  /** OAuth2 client credentials: a bearer token for them, undefined when they are wrong. Absent: no token endpoint. */
  issueToken?(clientId: string, clientSecret: string, remoteAddress: string): { token: string; expiresInS: number } | undefined;
  /** Whether the caller may see the table (in lists and HEAD). Default: yes. */
  mayDescribe?(caller: RestCaller, id: TableIdentifier): boolean;
  /** Whether the caller may load the table (read its metadata and so its files). Default: yes. */
  mayLoad?(caller: RestCaller, id: TableIdentifier): boolean;
}

type Method = 'GET' | 'HEAD' | 'POST' | 'DELETE';

interface Params {
  readonly namespace?: Namespace;
  readonly table?: string;
}

interface Ctx {
  /** Undefined when the server authenticates nobody (no `auth`). */
  readonly caller: RestCaller | undefined;
  readonly params: Params;
  readonly query: URLSearchParams;
  readonly body: () => Promise<JsonValue>;
}

/** What a handler answers: a JSON body (200) or no body (204). */
type Reply = { status: 200; json: JsonValue } | { status: 204 };

interface Route {
  readonly path: readonly string[];
  readonly methods: Partial<Record<Method, (ctx: Ctx) => Promise<Reply>>>;
}

export class RestCatalogServer {
  private readonly catalog: Catalog;
  private readonly options: RestCatalogServerOptions;
  private readonly routes: Route[];
  private server: Server | undefined;

  constructor(options: RestCatalogServerOptions) {
    this.options = options;
    this.catalog = options.catalog;
    this.routes = this.buildRoutes();
  }

  /** Every route served, in the spec's `endpoints` spelling. */
  endpoints(): string[] {
    const out = ['GET /v1/config'];
    for (const r of this.routes) {
      const path = `/v1/{prefix}/${r.path.map((s) => (s === ':ns' ? '{namespace}' : s === ':table' ? '{table}' : s)).join('/')}`;
      for (const m of Object.keys(r.methods)) out.push(`${m} ${path}`);
    }
    return out;
  }

  async start(): Promise<{ host: string; port: number; url: string }> {
    const listener: RequestListener = (req, res) => {
      this.handle(req, res).catch((err: unknown) => this.sendError(res, err, req.method === 'HEAD'));
    };
    const server = this.options.createServer ? this.options.createServer(listener) : createHttpServer(listener);
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? DEFAULT_REST_PORT, this.options.host ?? '0.0.0.0', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address() as AddressInfo;
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    const scheme = 'setSecureContext' in server ? 'https' : 'http';
    return { host: addr.address, port: addr.port, url: `${scheme}://${host}:${addr.port}` };
  }

  async close(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeIdleConnections();
    });
  }

  // ---------------------------------------------------------------------------------------------------

  private buildRoutes(): Route[] {
    const c = this.catalog;
    const ns = (p: Params): Namespace => p.namespace ?? [];
    const tableId = (p: Params): TableIdentifier => ({ namespace: ns(p), name: p.table ?? '' });
    return [
      {
        path: ['namespaces'],
        methods: {
          GET: async ({ query }) => {
            const parent = query.get('parent');
            const list = await c.listNamespaces(parent ? parent.split(NS_SEPARATOR) : []);
            return { status: 200, json: { namespaces: list.map((n) => [...n]) } };
          },
          POST: async ({ body }) => {
            const b = await body();
            if (typeof b !== 'object' || b === null || Array.isArray(b)) throw badRequest('The body must be a JSON object with a namespace list');
            const n = b['namespace'];
            if (!Array.isArray(n) || n.some((x) => typeof x !== 'string')) throw badRequest("'namespace' must be a list of strings");
            const props = stringProps(b['properties']);
            await c.createNamespace(n as string[], props);
            return { status: 200, json: { namespace: n, properties: props } };
          },
        },
      },
      {
        path: ['namespaces', ':ns'],
        methods: {
          GET: async ({ params }) => ({ status: 200, json: { namespace: [...ns(params)], properties: await c.loadNamespaceProperties(ns(params)) } }),
          HEAD: async ({ params }) => {
            if (!(await c.namespaceExists(ns(params)))) throw new CatalogError('NO_SUCH_NAMESPACE', `Namespace ${ns(params).join('.')} does not exist`);
            return { status: 204 };
          },
          DELETE: async ({ params }) => {
            await c.dropNamespace(ns(params));
            return { status: 204 };
          },
        },
      },
      {
        path: ['namespaces', ':ns', 'tables'],
        methods: {
          GET: async ({ params, caller }) => {
            const ids = (await c.listTables(ns(params))).filter((id) => this.may('mayDescribe', caller, id));
            return { status: 200, json: { identifiers: ids.map(identifierToJson) } };
          },
          POST: async ({ params, body }) => {
            const { name, request, stageCreate } = parseCreateTableRequest(await body());
            if (stageCreate) throw new CatalogError('UNSUPPORTED', 'Staged creates (stage-create) are not supported by this catalog; create the table directly');
            if (request.properties?.[FLOE_OWNER_PROPERTY] !== undefined) {
              throw new CatalogError('FORBIDDEN', `Property '${FLOE_OWNER_PROPERTY}' is reserved for tables Floe creates itself`);
            }
            const out = await c.createTable({ namespace: ns(params), name }, request);
            return { status: 200, json: loadTableResultToJson({ ...out, config: this.tableConfig(out.config) }) };
          },
        },
      },
      {
        path: ['namespaces', ':ns', 'register'],
        methods: {
          POST: async ({ params, body }) => {
            const b = await body();
            if (typeof b !== 'object' || b === null || Array.isArray(b)) throw badRequest("The body must be a JSON object with 'name' and 'metadata-location'");
            const name = b['name'];
            const location = b['metadata-location'];
            if (typeof name !== 'string' || typeof location !== 'string') throw badRequest("Registering a table needs string 'name' and 'metadata-location'");
            if (b['overwrite'] === true) throw new CatalogError('UNSUPPORTED', 'Registering over an existing table (overwrite) is not supported; drop it first');
            const out = await c.registerTable({ namespace: ns(params), name }, location);
            return { status: 200, json: loadTableResultToJson({ ...out, config: this.tableConfig(out.config) }) };
          },
        },
      },
      {
        path: ['namespaces', ':ns', 'tables', ':table'],
        methods: {
          GET: async ({ params, caller }) => {
            this.require('mayLoad', caller, tableId(params), 'load');
            const out = await c.loadTable(tableId(params));
            return { status: 200, json: loadTableResultToJson({ ...out, config: this.tableConfig(out.config) }) };
          },
          HEAD: async ({ params, caller }) => {
            this.require('mayDescribe', caller, tableId(params), 'see');
            if (!(await c.tableExists(tableId(params)))) throw new CatalogError('NO_SUCH_TABLE', `Table ${identifierToString(tableId(params))} does not exist`);
            return { status: 204 };
          },
          POST: async ({ params, body }) => {
            const id = tableId(params);
            const { requirements, updates } = parseCommitTableRequest(await body());
            const settable = this.options.settableWhenReadOnly;
            const onlySettable =
              settable !== undefined &&
              updates.length > 0 &&
              updates.every((u) => (u.action === 'set-properties' ? Object.keys(u.updates).every(settable) : u.action === 'remove-properties' && u.removals.every(settable)));
            if (!onlySettable) await this.refuseIfOwned(id, 'commit to');
            for (const u of updates) {
              if (u.action === 'set-properties' && u.updates[FLOE_OWNER_PROPERTY] !== undefined) {
                throw new CatalogError('FORBIDDEN', `Property '${FLOE_OWNER_PROPERTY}' is reserved for tables Floe creates itself`);
              }
            }
            return { status: 200, json: commitTableResultToJson(await c.commitTable(id, requirements, updates)) };
          },
          DELETE: async ({ params, query }) => {
            const id = tableId(params);
            await this.refuseIfOwned(id, 'drop');
            await c.dropTable(id, { purge: query.get('purgeRequested') === 'true' });
            return { status: 204 };
          },
        },
      },
    ];
  }

  private tableConfig(own: Readonly<Record<string, string>>): Record<string, string> {
    return { ...own, ...(this.options.tableConfig ?? {}) };
  }

  private async refuseIfOwned(id: TableIdentifier, what: string): Promise<void> {
    const { metadata } = await this.catalog.loadTable(id);
    const readOnly = this.options.isReadOnly ? this.options.isReadOnly(id, metadata) : metadata.properties[FLOE_OWNER_PROPERTY] !== undefined;
    if (readOnly) {
      const owner = metadata.properties[FLOE_OWNER_PROPERTY];
      throw new CatalogError(
        'FORBIDDEN',
        `Table ${identifierToString(id)} is written by Floe${owner ? ` (${owner})` : ''} and is read-only to other writers; cannot ${what} it. Produce to its Kafka topic instead, or copy it to a table of your own`,
      );
    }
  }

  private may(check: 'mayDescribe' | 'mayLoad', caller: RestCaller | undefined, id: TableIdentifier): boolean {
    const fn = this.options.auth?.[check];
    return caller === undefined || fn === undefined || fn.call(this.options.auth, caller, id);
  }

  private require(check: 'mayDescribe' | 'mayLoad', caller: RestCaller | undefined, id: TableIdentifier, what: string): void {
    if (this.may(check, caller, id)) return;
    throw new RestRequestError(
      403,
      'ForbiddenException',
      `${caller?.principal ?? 'This caller'} may not ${what} table ${identifierToString(id)}: it follows the ACLs of its Kafka topic (READ to load, DESCRIBE to see); ask an operator for them`,
    );
  }

  /** The caller of a request, or a 401 error; undefined when the server authenticates nobody. */
  private authenticate(req: IncomingMessage): RestCaller | undefined {
    const auth = this.options.auth;
    const remoteAddress = req.socket.remoteAddress ?? '';
    if (auth === undefined) {
      this.checkToken(req);
      return undefined;
    }
    const header = req.headers.authorization;
    const principal = auth.authenticate(header, remoteAddress);
    if (principal === undefined) {
      throw new RestRequestError(401, 'NotAuthorizedException', header ? 'The credentials are not valid' : 'Authentication required: send Authorization: Basic (a Floe user) or Bearer (a token from POST /v1/oauth/tokens)', {
        'www-authenticate': auth.challenge,
      });
    }
    return { principal, remoteAddress };
  }

  /** POST /v1/oauth/tokens: client credentials for a bearer token. */
  private async issueToken(req: IncomingMessage, res: ServerResponse, issue: NonNullable<RestAuth['issueToken']>): Promise<void> {
    const body = await this.readText(req);
    const { clientId, clientSecret } = parseTokenRequest(req.headers['content-type'], body, req.headers.authorization);
    const issued = issue.call(this.options.auth, clientId, clientSecret, req.socket.remoteAddress ?? '');
    if (issued === undefined) throw new OAuthError(401, 'invalid_client', 'The client credentials are not valid: client_id and client_secret are a Floe user and password');
    const json = JSON.stringify(tokenResponse(issued.token, issued.expiresInS));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json), 'cache-control': 'no-store' });
    res.end(json);
  }

  private checkToken(req: IncomingMessage): void {
    const token = this.options.token;
    if (token === undefined) return;
    const header = req.headers.authorization ?? '';
    const m = /^Bearer\s+(.+)$/i.exec(header);
    const given = Buffer.from(m?.[1]?.trim() ?? '');
    const want = Buffer.from(token);
    if (!m || given.length !== want.length || !timingSafeEqual(given, want)) {
      throw new RestRequestError(401, 'NotAuthorizedException', m ? 'The bearer token is not valid' : 'Authentication required: send Authorization: Bearer <token>', {
        'www-authenticate': 'Bearer realm="iceberg"',
      });
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://catalog');
    const method = (req.method ?? 'GET').toUpperCase();
    const issue = this.options.auth?.issueToken;
    if (url.pathname === OAUTH_TOKENS_PATH && issue !== undefined) {
      if (method !== 'POST') throw notAllowed(['POST']);
      await this.issueToken(req, res, issue);
      return;
    }
    const caller = this.authenticate(req);
    const raw = url.pathname.split('/').filter((s, i) => i > 0 || s !== '');
    if (raw[raw.length - 1] === '') raw.pop();
    if (raw[0] !== 'v1') throw notFound(url.pathname);
    let segments = raw.slice(1);
    if (segments.length === 1 && segments[0] === 'config') {
      if (method !== 'GET') throw notAllowed(['GET']);
      this.send(res, method, { status: 200, json: this.config() });
      return;
    }
    if (this.options.prefix !== undefined) {
      const want = this.options.prefix.split('/').filter((s) => s !== '');
      if (!want.every((p, i) => decodeSegment(segments[i] ?? '') === p)) throw notFound(url.pathname);
      segments = segments.slice(want.length);
    }
    for (const r of this.routes) {
      if (r.path.length !== segments.length) continue;
      const params: { namespace?: Namespace; table?: string } = {};
      const match = r.path.every((p, i) => {
        const s = segments[i] as string;
        if (p === ':ns') {
          params.namespace = decodeSegment(s).split(NS_SEPARATOR);
          return true;
        }
        if (p === ':table') {
          params.table = decodeSegment(s);
          return true;
        }
        return p === s;
      });
      if (!match) continue;
      const handler = r.methods[method as Method];
      if (!handler) throw notAllowed(Object.keys(r.methods));
      const reply = await handler({ caller, params, query: url.searchParams, body: () => this.readBody(req) });
      this.send(res, method, reply);
      return;
    }
    throw notFound(url.pathname);
  }

  private config(): JsonValue {
    const overrides: Record<string, string> = {};
    if (this.options.prefix !== undefined) overrides['prefix'] = this.options.prefix;
    if (this.options.warehouse !== undefined) overrides['warehouse'] = this.options.warehouse;
    return { defaults: {}, overrides, endpoints: this.endpoints() };
  }

  private async readText(req: IncomingMessage): Promise<string> {
    const max = this.options.maxBodyBytes ?? 16 * 1024 * 1024;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > max) throw new RestRequestError(413, 'BadRequestException', `Request body is larger than ${max} bytes`);
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  private async readBody(req: IncomingMessage): Promise<JsonValue> {
    const text = await this.readText(req);
    if (text.trim() === '') throw badRequest('The request needs a JSON body');
    try {
      return parseJson(text);
    } catch (err) {
      throw badRequest(`Malformed JSON body: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private send(res: ServerResponse, method: string, reply: Reply): void {
    if (reply.status === 204) {
      res.writeHead(204).end();
      return;
    }
    const body = stringifyJson(reply.json);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(method === 'HEAD' ? undefined : body);
  }

  private sendError(res: ServerResponse, err: unknown, head: boolean): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const e = toRestError(err);
    const body = err instanceof OAuthError ? JSON.stringify({ error: err.oauthError, error_description: err.message }) : errorBody(e);
    const extra = err instanceof RestRequestError ? err.headers : {};
    res.writeHead(e.status, { ...extra, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(head ? undefined : body);
  }
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw badRequest(`Path segment '${s}' is not valid percent-encoding`);
  }
}

function stringProps(v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw badRequest("'properties' must be an object of strings");
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== 'string') throw badRequest(`property '${k}' must be a string`);
    out[k] = x;
  }
  return out;
}

const badRequest = (message: string): RestRequestError => new RestRequestError(400, 'BadRequestException', message);
const notFound = (path: string): RestRequestError => new RestRequestError(404, 'NoSuchEndpointException', `No route ${path}; GET /v1/config lists the endpoints this catalog serves`);
const notAllowed = (allowed: string[]): RestRequestError =>
  new RestRequestError(405, 'MethodNotAllowedException', `Method not allowed here; use ${allowed.join(', ')}`, { allow: allowed.join(', ') });
