/**
 * The admin HTTP server (`admin.port`, default 9644): a small route table over node:http, so that health,
 * readiness and metrics today, and a status page or a JSON admin API later, are each one route.
 *
 * - A route is a method and a path (the query string is ignored when matching and handed to the handler);
 *   a path segment `{name}` matches any one segment and is handed over URL-decoded in `params.name`. Exact
 *   paths win over patterns. HEAD is answered wherever GET is (without a body, as HTTP says).
 * - Request bodies are read for POST, PUT and DELETE, up to MAX_ADMIN_BODY_BYTES (larger: 413).
 * - Unknown path: 404; known path, other method: 405 with `Allow`; a handler that throws: 500, or the
 *   status of an AdminHttpError. Every error is a JSON body `{ "error": <code>, "message": <what to do> }`.
 * - A guard (admin-auth.ts, with admin.authentication.method) may refuse a request before its route runs
 *   (401, 403); a guard set later (once the broker's users are loaded) applies from then on.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '../logger.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface AdminRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage['headers'];
  /** Values of the route's `{name}` segments, URL-decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** The request body (empty for GET and HEAD). */
  readonly body: Buffer;
}

/** Request bodies larger than this are refused with 413. */
export const MAX_ADMIN_BODY_BYTES = 1024 * 1024;

/** Thrown by a handler: answered with this status and `{ error: code, message }`. */
export class AdminHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'AdminHttpError';
  }
}

export interface AdminResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
}

/** Decides whether a request may be served: undefined to serve it, else the refusal to send. */
export type AdminGuard = (req: { readonly method: string; readonly path: string; readonly headers: IncomingMessage['headers']; readonly remoteAddress: string }) => AdminResponse | undefined;

export type AdminHandler = (req: AdminRequest) => AdminResponse | Promise<AdminResponse>;

export interface AdminRoute {
  readonly method: HttpMethod;
  readonly path: string;
  readonly handler: AdminHandler;
}

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** A JSON response. */
export function json(status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): AdminResponse {
  return { status, headers: { 'content-type': JSON_CONTENT_TYPE, ...headers }, body: JSON.stringify(body) + '\n' };
}

/** An error response: `{ error, message }`. */
export function httpError(status: number, error: string, message: string, headers: Readonly<Record<string, string>> = {}): AdminResponse {
  return json(status, { error, message }, headers);
}

export class AdminServer {
  private readonly routes = new Map<string, Map<string, AdminHandler>>();
  /** Routes with `{name}` segments, in the order added. */
  private readonly patterns: { path: string; segments: string[]; byMethod: Map<string, AdminHandler> }[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;
  private address: AddressInfo | undefined;
  private guard: AdminGuard | undefined;

  constructor(
    private readonly log: Logger,
    options: { readonly createServer?: (listener: RequestListener) => Server; readonly guard?: AdminGuard } = {},
  ) {
    const listener: RequestListener = (req, res) => {
      this.serve(req, res).catch((err: unknown) => {
        this.log.warn('admin request failed', { err });
        res.destroy();
      });
    };
    this.server = options.createServer ? options.createServer(listener) : createServer(listener);
    this.guard = options.guard;
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
  }

  /** Replaces the guard (applies to requests from now on). */
  setGuard(guard: AdminGuard): void {
    this.guard = guard;
  }

  /** Adds a route; a method and path may be routed once. */
  route(route: AdminRoute): this {
    let byMethod: Map<string, AdminHandler>;
    if (route.path.includes('{')) {
      let p = this.patterns.find((x) => x.path === route.path);
      if (p === undefined) {
        p = { path: route.path, segments: route.path.split('/'), byMethod: new Map() };
        this.patterns.push(p);
      }
      byMethod = p.byMethod;
    } else {
      byMethod = this.routes.get(route.path) ?? new Map<string, AdminHandler>();
      this.routes.set(route.path, byMethod);
    }
    if (byMethod.has(route.method)) throw new Error(`admin route ${route.method} ${route.path} is already registered`);
    byMethod.set(route.method, route.handler);
    return this;
  }

  /** The handlers of a path and the values of its `{name}` segments; undefined when nothing matches. */
  private match(path: string): { byMethod: Map<string, AdminHandler>; params: Record<string, string> } | undefined {
    const exact = this.routes.get(path);
    if (exact !== undefined) return { byMethod: exact, params: {} };
    const parts = path.split('/');
    for (const p of this.patterns) {
      if (p.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length && ok; i++) {
        const want = p.segments[i] as string;
        const got = parts[i] as string;
        if (want.startsWith('{') && want.endsWith('}')) {
          let value: string;
          try {
            value = decodeURIComponent(got);
          } catch {
            ok = false;
            break;
          }
          if (value === '') ok = false;
          else params[want.slice(1, -1)] = value;
        } else if (want !== got) ok = false;
      }
      if (ok) return { byMethod: p.byMethod, params };
    }
    return undefined;
  }

  async listen(port: number, host: string): Promise<{ host: string; port: number; url: string }> {
    await new Promise<void>((resolve, reject) => {
      const fail = (err: Error) => reject(new Error(`cannot start the admin HTTP server on ${host}:${port} (${err.message}); free the port, pick another with admin.port, or set it to -1`, { cause: err }));
      this.server.once('error', fail);
      this.server.listen(port, host, () => {
        this.server.off('error', fail);
        resolve();
      });
    });
    this.address = this.server.address() as AddressInfo;
    const shown = this.address.address === '0.0.0.0' || this.address.address === '::' ? '127.0.0.1' : this.address.address;
    const urlHost = shown.includes(':') ? `[${shown}]` : shown;
    const scheme = 'setSecureContext' in this.server ? 'https' : 'http';
    return { host: this.address.address, port: this.address.port, url: `${scheme}://${urlHost}:${this.address.port}` };
  }

  /** The bound port (after listen). */
  get port(): number {
    return this.address?.port ?? -1;
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://admin.invalid');
    const method = (req.method ?? 'GET').toUpperCase();
    const matched = this.match(url.pathname);
    const byMethod = matched?.byMethod;
    let response: AdminResponse;
    const refused = this.guard?.({ method, path: url.pathname, headers: req.headers, remoteAddress: req.socket.remoteAddress ?? '' });
    if (refused !== undefined) {
      req.resume();
      response = refused;
    } else if (byMethod === undefined) {
      // Request bodies of unknown paths are drained so keep-alive connections stay usable.
      req.resume();
      const known = [...this.routes.keys(), ...this.patterns.map((p) => p.path)].sort().join(', ');
      response = httpError(404, 'not_found', `no admin endpoint at ${url.pathname}; try ${known}`);
    } else {
      const handler = byMethod.get(method) ?? (method === 'HEAD' ? byMethod.get('GET') : undefined);
      if (handler === undefined) {
        const allow = allowed(byMethod);
        response = httpError(405, 'method_not_allowed', `${url.pathname} answers ${allow}, not ${method}`, { allow });
      } else {
        const body = method === 'GET' || method === 'HEAD' ? { ok: true as const, bytes: Buffer.alloc(0) } : await readBody(req, MAX_ADMIN_BODY_BYTES);
        if (!body.ok) {
          response = httpError(413, 'body_too_large', `request bodies are limited to ${MAX_ADMIN_BODY_BYTES} bytes; send a smaller one`);
          res.setHeader('connection', 'close');
        } else {
          try {
            response = await handler({ method, path: url.pathname, query: url.searchParams, headers: req.headers, params: matched?.params ?? {}, body: body.bytes });
          } catch (err) {
            if (err instanceof AdminHttpError) {
              response = httpError(err.status, err.code, err.message);
            } else {
              this.log.warn('admin endpoint failed', { err, path: url.pathname });
              response = httpError(500, 'internal_error', `${url.pathname} failed: ${err instanceof Error ? err.message : String(err)}; see the broker log`);
            }
          }
        }
      }
    }
    req.resume();
    const body = typeof response.body === 'string' ? Buffer.from(response.body) : response.body;
    res.writeHead(response.status, { ...response.headers, 'content-length': String(body.length), 'cache-control': 'no-store' });
    res.end(method === 'HEAD' ? undefined : body);
  }

  /** Stops listening and closes every connection (idle keep-alive ones included). */
  async close(): Promise<void> {
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}

/** Reads a request body up to `limit` bytes; past it, stops collecting (and reports it) but drains the rest. */
function readBody(req: IncomingMessage, limit: number): Promise<{ ok: true; bytes: Buffer } | { ok: false }> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      resolve({ ok: false });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) over = true;
      else chunks.push(c);
    });
    req.once('end', () => resolve(over ? { ok: false } : { ok: true, bytes: Buffer.concat(chunks) }));
    req.once('error', reject);
  });
}

function allowed(byMethod: ReadonlyMap<string, AdminHandler>): string {
  const methods = [...byMethod.keys()];
  if (methods.includes('GET')) methods.push('HEAD');
  return methods.join(', ');
}
