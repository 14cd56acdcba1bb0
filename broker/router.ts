/**
 * Routes request frames to handlers: decodes the header and body, dispatches by API key, encodes the
 * response with the request's version. ApiVersions is answered here, from the registered handlers, so the
 * broker never advertises an API it does not implement.
 *
 * Kafka's rules for requests it cannot serve:
 * - ApiVersions at a version above ours: answer in the v0 format with UNSUPPORTED_VERSION (35) and our
 *   versions, so the client can retry with one we support.
 * - Any other API or version we do not serve, or a body that does not parse: close the connection.
 * - Bytes after a complete body: ignored, as Kafka ignores them, and counted per API key
 *   (`requestsWithTrailingBytes`), so a client that sends them is visible without failing it.
 *
 * With a RequestObserver (metrics on), every request is timed from the decode to the encoded response and
 * reported once, answered or failed; without one, the path is the same as before, untimed.
 */
import { decodeRequest, encodeResponse, encodeResponseChunks, isProtocolError, type DecodedRequest } from '../protocol/index.js';
import { ErrorCode } from '../protocol/error-codes.js';
import type { ConnectionInfo, FrameHandler, ResponseFrame } from './server/connection.js';

const FETCH_KEY = 1;
/** Record sets at least this large go to the socket as their own buffers; smaller ones are cheaper to copy. */
const SPLICE_MIN_BYTES = 16 * 1024;
import type { ApiHandler, Body } from './handlers/handler.js';
import { accessFor, type Denial } from './security/acls/access.js';
import type { AclAuthorizer } from './security/acls/authorizer.js';

export const API_VERSIONS_KEY = 18;
const API_VERSIONS_MAX = 4;

/** Told about every decoded request once it is answered or has failed (metrics). Must be cheap. */
export interface RequestObserver {
  /** Answered (or, for acks=0 Produce, done without a response) after `seconds`. */
  answered(apiKey: number, seconds: number): void;
  /** Failed and closed its connection after `seconds`. */
  failed(apiKey: number, seconds: number): void;
}

export class Router {
  private readonly handlers = new Map<number, ApiHandler>();
  private readonly trailing = new Map<number, number>();

  constructor(
    private readonly observer?: RequestObserver,
    /** With an authorizer, every request carries its principal's Access; handlers check it. */
    private readonly authorizer?: AclAuthorizer,
    /** Told about every refused operation (the broker logs them, rate-limited). */
    private readonly onDenied?: (d: Denial) => void,
  ) {}

  /** How many requests of each API key carried bytes after their body (ignored, as Kafka does). */
  requestsWithTrailingBytes(): ReadonlyMap<number, number> {
    return this.trailing;
  }

  register(handler: ApiHandler): this {
    if (this.handlers.has(handler.apiKey)) throw new Error(`a handler for API ${handler.apiKey} is already registered`);
    if (handler.apiKey === API_VERSIONS_KEY) throw new Error('ApiVersions is answered by the router itself');
    this.handlers.set(handler.apiKey, handler);
    return this;
  }

  /** The ApiVersions `apiKeys` list: ApiVersions itself plus every registered handler. */
  apiVersions(): { apiKey: number; minVersion: number; maxVersion: number }[] {
    return [
      { apiKey: API_VERSIONS_KEY, minVersion: 0, maxVersion: API_VERSIONS_MAX },
      ...[...this.handlers.values()].map((h) => ({ apiKey: h.apiKey, minVersion: h.minVersion, maxVersion: h.maxVersion })),
    ].sort((a, b) => a.apiKey - b.apiKey);
  }

  /** Whether a frame's handler keeps no view of it once answered, so that its memory may be reused (ApiHandler.keepsNoRequestBytes). */
  readonly recyclable = (frame: Buffer): boolean => frame.length >= 2 && this.handlers.get(frame.readInt16BE(0))?.keepsNoRequestBytes === true;

  readonly handleFrame: FrameHandler = (frame: Buffer, conn: ConnectionInfo) => {
    const observer = this.observer;
    if (observer === undefined) return this.route(frame, conn);
    const started = performance.now();
    let apiKey = -1;
    const seconds = () => (performance.now() - started) / 1000;
    try {
      const result = this.route(frame, conn, (key) => (apiKey = key));
      if (!(result instanceof Promise)) {
        observer.answered(apiKey, seconds());
        return result;
      }
      return result.then(
        (response) => {
          observer.answered(apiKey, seconds());
          return response;
        },
        (err: unknown) => {
          observer.failed(apiKey, seconds());
          throw err;
        },
      );
    } catch (err) {
      // A frame that does not decode has no API key: it counts as api -1.
      observer.failed(apiKey, seconds());
      throw err;
    }
  };

  private route(frame: Buffer, conn: ConnectionInfo, decoded?: (apiKey: number) => void): Promise<ResponseFrame | undefined> | ResponseFrame | undefined {
    let request: DecodedRequest;
    try {
      request = decodeRequest(frame);
    } catch (err) {
      if (isProtocolError(err) && err.code === 'UNSUPPORTED_VERSION' && err.header?.apiKey === API_VERSIONS_KEY) {
        return encodeResponse(err.header, API_VERSIONS_KEY, 0, { errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: this.apiVersions() });
      }
      throw err;
    }
    const { header, apiKey, apiVersion } = request;
    decoded?.(apiKey);
    if (request.trailingBytes > 0) this.trailing.set(apiKey, (this.trailing.get(apiKey) ?? 0) + 1);
    if (apiKey === API_VERSIONS_KEY) return encodeResponse(header, apiKey, apiVersion, this.apiVersionsBody());
    const handler = this.handlers.get(apiKey);
    if (!handler) throw new RouterError(`unsupported API key ${apiKey}`, conn);
    if (apiVersion < handler.minVersion || apiVersion > handler.maxVersion) {
      throw new RouterError(`unsupported version ${apiVersion} of API ${apiKey} (we serve ${handler.minVersion}-${handler.maxVersion})`, conn);
    }
    const ctx = this.authorizer === undefined ? { header, apiVersion, conn } : { header, apiVersion, conn, access: accessFor(this.authorizer, conn, this.onDenied) };
    const result = handler.handle(request.body as Body, ctx);
    const encode = (body: Body | undefined): ResponseFrame | undefined => {
      if (body === undefined) return undefined;
      // Fetch responses carry their record sets by reference: the segment bytes are not copied again.
      return apiKey === FETCH_KEY ? encodeResponseChunks(header, apiKey, apiVersion, body, SPLICE_MIN_BYTES) : encodeResponse(header, apiKey, apiVersion, body);
    };
    return result instanceof Promise ? result.then(encode) : encode(result);
  }

  private apiVersionsBody(): Body {
    return { errorCode: ErrorCode.NONE, apiKeys: this.apiVersions(), throttleTimeMs: 0 };
  }
}

export class RouterError extends Error {
  readonly code = 'UNSUPPORTED_REQUEST';
  constructor(message: string, conn: ConnectionInfo) {
    super(`${message} from ${conn.remoteAddress}; closing the connection`);
    this.name = 'RouterError';
  }
}
