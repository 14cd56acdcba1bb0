/**
 * The admin HTTP server (`admin.port`, default 9644): a small route table over node:http, so that health,
 * readiness and metrics today, and a status page or a JSON admin API later, are each one route.
 *
 * - A route is a method and an exact path (the query string is ignored when matching and handed to the
 *   handler); HEAD is answered wherever GET is (without a body, as HTTP says).
 * - Unknown path: 404; known path, other method: 405 with `Allow`; a handler that throws: 500. Every error
 *   is a JSON body `{ "error": <code>, "message": <what to do> }`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '../logger.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface AdminRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage['headers'];
}

export interface AdminResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
}

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
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;
  private address: AddressInfo | undefined;

  constructor(private readonly log: Logger) {
    this.server = createServer((req, res) => {
      this.serve(req, res).catch((err: unknown) => {
        this.log.warn('admin request failed', { err });
        res.destroy();
      });
    });
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
  }

  /** Adds a route; a method and path may be routed once. */
  route(route: AdminRoute): this {
    const byMethod = this.routes.get(route.path) ?? new Map<string, AdminHandler>();
    if (byMethod.has(route.method)) throw new Error(`admin route ${route.method} ${route.path} is already registered`);
    byMethod.set(route.method, route.handler);
    this.routes.set(route.path, byMethod);
    return this;
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
    return { host: this.address.address, port: this.address.port, url: `http://${urlHost}:${this.address.port}` };
  }

  /** The bound port (after listen). */
  get port(): number {
    return this.address?.port ?? -1;
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://admin.invalid');
    const method = (req.method ?? 'GET').toUpperCase();
    const byMethod = this.routes.get(url.pathname);
    let response: AdminResponse;
    if (byMethod === undefined) {
      response = httpError(404, 'not_found', `no admin endpoint at ${url.pathname}; try ${[...this.routes.keys()].sort().join(', ')}`);
    } else {
      const handler = byMethod.get(method) ?? (method === 'HEAD' ? byMethod.get('GET') : undefined);
      if (handler === undefined) {
        const allow = allowed(byMethod);
        response = httpError(405, 'method_not_allowed', `${url.pathname} answers ${allow}, not ${method}`, { allow });
      } else {
        try {
          response = await handler({ method, path: url.pathname, query: url.searchParams, headers: req.headers });
        } catch (err) {
          this.log.warn('admin endpoint failed', { err, path: url.pathname });
          response = httpError(500, 'internal_error', `${url.pathname} failed: ${err instanceof Error ? err.message : String(err)}; see the broker log`);
        }
      }
    }
    // Request bodies are not read by any route yet: drain them so keep-alive connections stay usable.
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

function allowed(byMethod: ReadonlyMap<string, AdminHandler>): string {
  const methods = [...byMethod.keys()];
  if (methods.includes('GET')) methods.push('HEAD');
  return methods.join(', ');
}
