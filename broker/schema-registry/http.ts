/**
 * The registry's HTTP layer (node:http): Confluent Schema Registry's REST API as clients use it. Routes,
 * request bodies and responses only; the rules live in the store.
 *
 * - Request bodies must be JSON sent as `application/vnd.schemaregistry.v1+json`,
 *   `application/vnd.schemaregistry+json`, `application/json` or `application/octet-stream` (or with no
 *   Content-Type); anything else is 415. Bodies over the limit are 413; malformed JSON is 400.
 * - Responses are `application/vnd.schemaregistry.v1+json`; errors are `{"error_code": N, "message": "..."}`
 *   with Confluent's codes (errors.ts).
 * - With `auth` (schema.registry.authentication.method=BASIC): requests without valid credentials are 401
 *   (`{"error_code": 401, ...}` and WWW-Authenticate, as Confluent's registry answers); a subject `auth`
 *   refuses is 403 (error_code 40301), and subject lists leave out what the caller may not read.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RegistryError } from './errors.js';
import { COMPATIBILITY_LEVELS, isCompatibilityLevel, isMode, isSchemaType, MODES, SCHEMA_TYPES, type SchemaReference, type SubjectVersion } from './model.js';
import type { SchemaRequest, SchemaStore, VersionSelector } from './store.js';

export const RESPONSE_CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json';
export const ACCEPTED_CONTENT_TYPES = Object.freeze(['application/vnd.schemaregistry.v1+json', 'application/vnd.schemaregistry+json', 'application/json', 'application/octet-stream']);
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

interface Ctx {
  readonly params: readonly string[];
  readonly query: URLSearchParams;
  readonly body: () => Promise<unknown>;
}

/** A JSON value (200), or raw text for the `/schema` endpoints. */
type Reply = { json: unknown } | { text: string };

interface Route {
  /** Path segments; ':p' matches one segment. */
  readonly path: readonly string[];
  readonly methods: Partial<Record<Method, (ctx: Ctx) => Promise<Reply> | Reply>>;
}

export interface RegistryHttpOptions {
  readonly host: string;
  readonly port: number;
  readonly maxBodyBytes?: number;
  /** Builds the server (node:https for TLS). Default: node:http. */
  readonly createServer?: (listener: RequestListener) => Server;
  readonly auth?: RegistryAuth;
}

/** READ: look at a subject (its versions, schemas, config, compatibility checks); WRITE: change it. */
export type SubjectOperation = 'READ' | 'WRITE';

export interface RegistryAuth {
  /** The principal of an Authorization header; undefined for missing or wrong credentials (401). */
  authenticate(authorization: string | undefined, remoteAddress: string): string | undefined;
  readonly challenge: string;
  /** Whether the principal may do `operation` on `subject`. Default: yes. */
  maySubject?(principal: string, remoteAddress: string, subject: string, operation: SubjectOperation, quiet: boolean): boolean;
}

/** The subject a route acts on (its first parameter), for routes under subjects/, compatibility/, config/, mode/. */
function subjectOf(route: Route, params: readonly string[]): string | undefined {
  const head = route.path[0];
  if (route.path.length < 2 || params.length === 0) return undefined;
  if (head === 'subjects' || head === 'config' || head === 'mode' || (head === 'compatibility' && route.path[1] === 'subjects')) return params[0];
  return undefined;
}

/** Registering, deleting and changing a subject's config or mode write; everything else reads. */
function subjectOperation(route: Route, method: Method): SubjectOperation {
  if (method === 'DELETE' || method === 'PUT') return 'WRITE';
  if (method === 'POST' && route.path[0] === 'subjects' && route.path[2] === 'versions') return 'WRITE';
  return 'READ';
}

export class RegistryHttpServer {
  private readonly routes: Route[];
  private server: Server | undefined;
  private readonly maxBodyBytes: number;

  constructor(
    private readonly store: SchemaStore,
    private readonly options: RegistryHttpOptions,
  ) {
    this.routes = buildRoutes(store);
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  }

  async start(): Promise<{ host: string; port: number; tls: boolean }> {
    const listener: RequestListener = (req, res) => {
      this.handle(req, res).catch((err: unknown) => sendError(res, err));
    };
    const server = this.options.createServer ? this.options.createServer(listener) : createServer(listener);
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address() as AddressInfo;
    return { host: addr.address, port: addr.port, tls: 'setSecureContext' in server };
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

  /** The caller's principal, or throws 401; undefined without auth. */
  private authenticate(req: IncomingMessage, res: ServerResponse): string | undefined {
    const auth = this.options.auth;
    if (auth === undefined) return undefined;
    const principal = auth.authenticate(req.headers.authorization, req.socket.remoteAddress ?? '');
    if (principal !== undefined) return principal;
    req.resume();
    res.setHeader('WWW-Authenticate', auth.challenge);
    throw new RegistryError('UNAUTHORIZED', req.headers.authorization ? 'Unauthorized: the credentials are not valid' : 'Unauthorized: send HTTP Basic credentials of a Floe user (basic.auth.user.info)');
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const principal = this.authenticate(req, res);
    const url = new URL(req.url ?? '/', 'http://registry');
    const segments = url.pathname.split('/').filter((s) => s !== '');
    let decoded: string[];
    try {
      decoded = segments.map((s) => decodeURIComponent(s));
    } catch {
      throw new RegistryError('NOT_FOUND', 'HTTP 404 Not Found');
    }
    const match = this.match(decoded);
    if (!match) throw new RegistryError('NOT_FOUND', 'HTTP 404 Not Found');
    const method = (req.method ?? 'GET').toUpperCase() as Method;
    const handler = match.route.methods[method];
    if (!handler) {
      res.setHeader('Allow', Object.keys(match.route.methods).join(', '));
      throw new RegistryError('METHOD_NOT_ALLOWED', 'HTTP 405 Method Not Allowed');
    }
    const may = this.options.auth?.maySubject;
    const remote = req.socket.remoteAddress ?? '';
    const subject = subjectOf(match.route, match.params);
    if (principal !== undefined && may !== undefined && subject !== undefined) {
      const operation = subjectOperation(match.route, method);
      if (!may.call(this.options.auth, principal, remote, subject, operation, false)) {
        req.resume();
        throw new RegistryError('FORBIDDEN', `${principal} may not ${operation === 'READ' ? 'read' : 'change'} subject ${subject}: it follows the ACLs of its topic (${operation} on the topic)`);
      }
    }
    const body = () => this.readBody(req);
    if (method === 'POST' || method === 'PUT') checkContentType(req);
    const reply = await handler({ params: match.params, query: url.searchParams, body });
    if ('text' in reply) send(res, 200, reply.text);
    else {
      // Subject lists show only the subjects the caller may read.
      const shown =
        principal !== undefined && may !== undefined && match.route.path.length === 1 && match.route.path[0] === 'subjects' && Array.isArray(reply.json)
          ? (reply.json as unknown[]).filter((s) => typeof s !== 'string' || may.call(this.options.auth, principal, remote, s, 'READ', true))
          : reply.json;
      send(res, 200, JSON.stringify(shown));
    }
  }

  private match(segments: readonly string[]): { route: Route; params: string[] } | undefined {
    for (const route of this.routes) {
      if (route.path.length !== segments.length) continue;
      const params: string[] = [];
      let ok = true;
      for (let i = 0; i < segments.length && ok; i++) {
        const want = route.path[i];
        const got = segments[i] ?? '';
        if (want === ':p') params.push(got);
        else if (want !== got) ok = false;
      }
      if (ok) return { route, params };
    }
    return undefined;
  }

  private async readBody(req: IncomingMessage): Promise<unknown> {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > this.maxBodyBytes) throw tooLarge(this.maxBodyBytes);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > this.maxBodyBytes) throw tooLarge(this.maxBodyBytes);
      chunks.push(chunk);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (text.trim() === '') return {};
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new RegistryError('BAD_REQUEST', `Unrecognized JSON in the request body: ${(err as Error).message}`);
    }
  }
}

function tooLarge(limit: number): RegistryError {
  return new RegistryError('PAYLOAD_TOO_LARGE', `HTTP 413 Payload Too Large: the request body is larger than ${limit} bytes`);
}

function checkContentType(req: IncomingMessage): void {
  const raw = req.headers['content-type'];
  if (raw === undefined || raw.trim() === '') return;
  const type = raw.split(';')[0]?.trim().toLowerCase() ?? '';
  if (!ACCEPTED_CONTENT_TYPES.includes(type)) throw new RegistryError('UNSUPPORTED_MEDIA_TYPE', `HTTP 415 Unsupported Media Type: send ${ACCEPTED_CONTENT_TYPES.slice(0, 3).join(', ')}`);
}

function send(res: ServerResponse, status: number, body: string, close = false): void {
  res.statusCode = status;
  res.setHeader('Content-Type', RESPONSE_CONTENT_TYPE);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  if (close) res.setHeader('Connection', 'close');
  res.end(body);
}

function sendError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const e = err instanceof RegistryError ? err : new RegistryError('STORE_ERROR', `Internal server error: ${(err as Error)?.message ?? String(err)}`);
  // An oversized body is not read to its end: close the connection after answering.
  send(res, e.status, JSON.stringify(e.toBody()), e.kind === 'PAYLOAD_TOO_LARGE');
}

// -- request parsing ----------------------------------------------------------------------------------

function bool(query: URLSearchParams, name: string): boolean {
  return query.get(name)?.toLowerCase() === 'true';
}

function subjectParam(s: string | undefined): string {
  if (s === undefined || s === '' || /[\u0000-\u001f]/.test(s)) throw new RegistryError('INVALID_SUBJECT', `The specified subject is not valid: ${JSON.stringify(s ?? '')}`);
  return s;
}

export function parseVersion(raw: string | undefined): VersionSelector {
  if (raw === 'latest' || raw === '-1') return 'latest';
  if (raw !== undefined && /^\d{1,10}$/.test(raw)) {
    const n = Number(raw);
    if (n >= 1 && n <= 2 ** 31 - 1) return n;
  }
  throw new RegistryError('INVALID_VERSION', `The specified version '${raw ?? ''}' is not a valid version id. Allowed values are between [1, 2^31-1] and the string "latest"`);
}

function parseId(raw: string | undefined): number {
  if (raw === undefined || !/^\d{1,10}$/.test(raw)) throw new RegistryError('SCHEMA_NOT_FOUND', `Schema ${raw ?? ''} not found`);
  return Number(raw);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function parseSchemaRequest(body: unknown): SchemaRequest {
  if (!isObj(body)) throw new RegistryError('INVALID_SCHEMA', 'Invalid schema: the body must be a JSON object with a "schema" string');
  const schema = body['schema'];
  if (typeof schema !== 'string' || schema.trim() === '') throw new RegistryError('INVALID_SCHEMA', 'Empty schema');
  const type = body['schemaType'] ?? 'AVRO';
  if (!isSchemaType(type)) throw new RegistryError('INVALID_SCHEMA', `Invalid schema type ${JSON.stringify(type)}; use one of ${SCHEMA_TYPES.join(', ')}`);
  const refs = body['references'] ?? [];
  if (!Array.isArray(refs)) throw new RegistryError('INVALID_SCHEMA', 'Invalid schema: "references" must be a list');
  const references: SchemaReference[] = refs.map((r, i) => {
    if (!isObj(r) || typeof r['name'] !== 'string' || typeof r['subject'] !== 'string' || typeof r['version'] !== 'number' || !Number.isInteger(r['version'])) {
      throw new RegistryError('INVALID_SCHEMA', `Invalid schema: reference ${i} needs a string "name", a string "subject" and an integer "version"`);
    }
    return { name: r['name'], subject: r['subject'], version: r['version'] };
  });
  const id = body['id'];
  const version = body['version'];
  return {
    schema,
    schemaType: type,
    references,
    ...(body['metadata'] !== undefined && body['metadata'] !== null ? { metadata: body['metadata'] } : {}),
    ...(body['ruleSet'] !== undefined && body['ruleSet'] !== null ? { ruleSet: body['ruleSet'] } : {}),
    ...(typeof id === 'number' && Number.isInteger(id) ? { id } : {}),
    ...(typeof version === 'number' && Number.isInteger(version) ? { version } : {}),
  };
}

// -- responses ----------------------------------------------------------------------------------------

function schemaFields(v: Pick<SubjectVersion, 'schemaType' | 'schema' | 'references' | 'metadata' | 'ruleSet'>, schema = v.schema): Record<string, unknown> {
  return {
    ...(v.schemaType === 'AVRO' ? {} : { schemaType: v.schemaType }),
    ...(v.references.length > 0 ? { references: v.references } : {}),
    ...(v.metadata !== undefined ? { metadata: v.metadata } : {}),
    ...(v.ruleSet !== undefined ? { ruleSet: v.ruleSet } : {}),
    schema,
  };
}

export function versionJson(v: SubjectVersion, schema = v.schema): Record<string, unknown> {
  return { subject: v.subject, version: v.version, id: v.id, ...schemaFields(v, schema), ...(v.deleted ? { deleted: true } : {}) };
}

// -- routes -------------------------------------------------------------------------------------------

function buildRoutes(store: SchemaStore): Route[] {
  const state = store.state;
  /** A version as GET serves it: the schema in the form `?format=` asks for. */
  const served = (v: SubjectVersion, query: URLSearchParams) => versionJson(v, store.renderSchema(v, query.get('format') ?? undefined));
  const subjectsList = (query: URLSearchParams): string[] => {
    const prefix = query.get('subjectPrefix') ?? '';
    const deletedOnly = bool(query, 'deletedOnly');
    const deleted = bool(query, 'deleted') || deletedOnly;
    // deletedOnly: the subjects that are soft-deleted as a whole (no live version left).
    return state.subjectNames(deleted).filter((s) => s.startsWith(prefix) && (!deletedOnly || state.versions(s).length === 0));
  };
  const compat = (subject: string, selector: VersionSelector | undefined, body: unknown, verbose: boolean) => {
    const r = store.testCompatibility(subject, selector, parseSchemaRequest(body));
    return { json: { is_compatible: r.compatible, ...(verbose ? { messages: r.messages } : {}) } };
  };
  return [
    { path: [], methods: { GET: () => ({ json: {} }) } },
    { path: ['subjects'], methods: { GET: ({ query }) => ({ json: subjectsList(query) }) } },
    // One context, the default one: clients that list contexts see Confluent's answer for a registry without any.
    { path: ['contexts'], methods: { GET: () => ({ json: ['.'] }) } },
    {
      path: ['subjects', ':p'],
      methods: {
        POST: async ({ params, query, body }) => ({ json: versionJson(store.lookup(subjectParam(params[0]), parseSchemaRequest(await body()), bool(query, 'deleted'))) }),
        DELETE: async ({ params, query }) => ({ json: await store.deleteSubject(subjectParam(params[0]), bool(query, 'permanent')) }),
      },
    },
    {
      path: ['subjects', ':p', 'versions'],
      methods: {
        GET: ({ params, query }) => {
          const subject = subjectParam(params[0]);
          const includeDeleted = bool(query, 'deleted') || bool(query, 'deletedOnly');
          const versions = state.versions(subject, includeDeleted).filter((v) => !bool(query, 'deletedOnly') || v.deleted);
          if (state.versions(subject, includeDeleted).length === 0) throw new RegistryError('SUBJECT_NOT_FOUND', `Subject '${subject}' not found.`);
          return { json: versions.map((v) => v.version) };
        },
        POST: async ({ params, query, body }) => {
          const v = await store.register(subjectParam(params[0]), parseSchemaRequest(await body()), bool(query, 'normalize'));
          return { json: { id: v.id, version: v.version, ...schemaFields(v) } };
        },
      },
    },
    {
      path: ['subjects', ':p', 'versions', ':p'],
      methods: {
        GET: ({ params, query }) => ({ json: served(store.getVersion(subjectParam(params[0]), parseVersion(params[1]), bool(query, 'deleted')), query) }),
        DELETE: async ({ params, query }) => ({ json: await store.deleteVersion(subjectParam(params[0]), parseVersion(params[1]), bool(query, 'permanent')) }),
      },
    },
    {
      path: ['subjects', ':p', 'versions', ':p', 'schema'],
      methods: { GET: ({ params, query }) => ({ text: store.renderSchema(store.getVersion(subjectParam(params[0]), parseVersion(params[1]), bool(query, 'deleted')), query.get('format') ?? undefined) }) },
    },
    {
      path: ['subjects', ':p', 'versions', ':p', 'referencedby'],
      methods: {
        GET: ({ params, query }) => {
          const v = store.getVersion(subjectParam(params[0]), parseVersion(params[1]), true);
          return { json: state.referencedBy(v.subject, v.version, bool(query, 'deleted')) };
        },
      },
    },
    {
      path: ['schemas'],
      methods: {
        GET: ({ query }) => {
          const prefix = query.get('subjectPrefix') ?? '';
          const deleted = bool(query, 'deleted');
          const latestOnly = bool(query, 'latestOnly');
          const all = state
            .subjectNames(deleted)
            .filter((s) => s.startsWith(prefix))
            .flatMap((s) => (latestOnly ? [state.latestVersion(s, deleted)].filter((v): v is SubjectVersion => v !== undefined) : state.versions(s, deleted)));
          const offset = Math.max(0, Number(query.get('offset') ?? 0) || 0);
          const limit = Number(query.get('limit') ?? -1);
          return { json: all.slice(offset, limit > 0 ? offset + limit : undefined).map((v) => served(v, query)) };
        },
      },
    },
    { path: ['schemas', 'types'], methods: { GET: () => ({ json: [...SCHEMA_TYPES] }) } },
    {
      path: ['schemas', 'ids', ':p'],
      methods: {
        GET: ({ params, query }) => {
          const id = parseId(params[0]);
          const c = state.schemaById(id);
          if (!c) throw new RegistryError('SCHEMA_NOT_FOUND', `Schema ${id} not found`);
          return { json: { ...schemaFields(c, store.renderSchema(c, query.get('format') ?? undefined)), ...(bool(query, 'fetchMaxId') ? { maxId: state.maxId } : {}) } };
        },
      },
    },
    {
      path: ['schemas', 'ids', ':p', 'schema'],
      methods: {
        GET: ({ params, query }) => {
          const id = parseId(params[0]);
          const c = state.schemaById(id);
          if (!c) throw new RegistryError('SCHEMA_NOT_FOUND', `Schema ${id} not found`);
          return { text: store.renderSchema(c, query.get('format') ?? undefined) };
        },
      },
    },
    {
      path: ['schemas', 'ids', ':p', 'subjects'],
      methods: {
        GET: ({ params, query }) => {
          const id = parseId(params[0]);
          const users = state.versionsOfId(id).filter((v) => bool(query, 'deleted') || !v.deleted);
          if (state.versionsOfId(id).length === 0) throw new RegistryError('SCHEMA_NOT_FOUND', `Schema ${id} not found`);
          return { json: [...new Set(users.map((v) => v.subject))] };
        },
      },
    },
    {
      path: ['schemas', 'ids', ':p', 'versions'],
      methods: {
        GET: ({ params, query }) => {
          const id = parseId(params[0]);
          const users = state.versionsOfId(id).filter((v) => bool(query, 'deleted') || !v.deleted);
          if (state.versionsOfId(id).length === 0) throw new RegistryError('SCHEMA_NOT_FOUND', `Schema ${id} not found`);
          return { json: users.map((v) => ({ subject: v.subject, version: v.version })) };
        },
      },
    },
    {
      path: ['compatibility', 'subjects', ':p', 'versions', ':p'],
      methods: { POST: async ({ params, query, body }) => compat(subjectParam(params[0]), parseVersion(params[1]), await body(), bool(query, 'verbose')) },
    },
    {
      path: ['compatibility', 'subjects', ':p', 'versions'],
      methods: { POST: async ({ params, query, body }) => compat(subjectParam(params[0]), undefined, await body(), bool(query, 'verbose')) },
    },
    {
      path: ['config'],
      methods: {
        GET: () => ({ json: { compatibilityLevel: state.effectiveCompatibility(null) } }),
        PUT: async ({ body }) => ({ json: { compatibility: await store.setCompatibility(null, compatibilityBody(await body())) } }),
        DELETE: async () => ({ json: { compatibilityLevel: await store.deleteCompatibility(null) } }),
      },
    },
    {
      path: ['config', ':p'],
      methods: {
        GET: ({ params, query }) => {
          const subject = subjectParam(params[0]);
          const own = state.configOf(subject);
          if (own !== undefined) return { json: { compatibilityLevel: own } };
          if (bool(query, 'defaultToGlobal')) return { json: { compatibilityLevel: state.effectiveCompatibility(null) } };
          throw new RegistryError('SUBJECT_COMPATIBILITY_NOT_CONFIGURED', `Subject '${subject}' does not have subject-level compatibility configured`);
        },
        PUT: async ({ params, body }) => ({ json: { compatibility: await store.setCompatibility(subjectParam(params[0]), compatibilityBody(await body())) } }),
        DELETE: async ({ params }) => ({ json: { compatibilityLevel: await store.deleteCompatibility(subjectParam(params[0])) } }),
      },
    },
    {
      path: ['mode'],
      methods: {
        GET: () => ({ json: { mode: state.effectiveMode(null) } }),
        PUT: async ({ body, query }) => ({ json: { mode: await store.setMode(null, modeBody(await body()), bool(query, 'force')) } }),
        DELETE: async () => ({ json: { mode: await store.deleteMode(null) } }),
      },
    },
    {
      path: ['mode', ':p'],
      methods: {
        GET: ({ params, query }) => {
          const subject = subjectParam(params[0]);
          const own = state.modeOf(subject);
          if (own !== undefined) return { json: { mode: own } };
          if (bool(query, 'defaultToGlobal')) return { json: { mode: state.effectiveMode(null) } };
          throw new RegistryError('SUBJECT_MODE_NOT_CONFIGURED', `Subject '${subject}' does not have subject-level mode configured`);
        },
        PUT: async ({ params, body, query }) => ({ json: { mode: await store.setMode(subjectParam(params[0]), modeBody(await body()), bool(query, 'force')) } }),
        DELETE: async ({ params }) => ({ json: { mode: await store.deleteMode(subjectParam(params[0])) } }),
      },
    },
  ];
}

function compatibilityBody(body: unknown): (typeof COMPATIBILITY_LEVELS)[number] {
  const level = isObj(body) ? (body['compatibility'] ?? body['compatibilityLevel']) : undefined;
  if (!isCompatibilityLevel(level)) throw new RegistryError('INVALID_COMPATIBILITY_LEVEL', `Invalid compatibility level ${JSON.stringify(level ?? null)}. Valid values are ${COMPATIBILITY_LEVELS.join(', ')}`);
  return level;
}

function modeBody(body: unknown): (typeof MODES)[number] {
  const mode = isObj(body) ? body['mode'] : undefined;
  if (!isMode(mode)) throw new RegistryError('INVALID_MODE', `Invalid mode ${JSON.stringify(mode ?? null)}. Valid values are ${MODES.join(', ')}`);
  return mode;
}
