/**
 * The contract of a request handler: one per Kafka API, registered in the Router, with the storage it
 * needs injected through its constructor (never imported). The router decodes, dispatches and encodes; a
 * handler sees plain request bodies (camelCase fields, as declared in protocol/messages) and returns a
 * plain response body.
 */
import type { RequestHeader } from '../../protocol/header.js';
import type { Access } from '../security/acls/access.js';
import type { ConnectionInfo } from '../server/connection.js';

export type Body = Record<string, unknown>;

export interface HandlerContext {
  readonly header: RequestHeader;
  readonly apiVersion: number;
  readonly conn: ConnectionInfo;
  /** The request principal's permissions, when an authorizer is configured (check with security/acls/access.ts). */
  readonly access?: Access;
}

export interface ApiHandler {
  readonly apiKey: number;
  /** The versions advertised in ApiVersions; every one must be answered (an error is an answer). */
  readonly minVersion: number;
  readonly maxVersion: number;
  /**
   * True when the handler keeps no view of its request's bytes once `handle` has resolved (nor anything
   * that still reads them: a pending write, a cache, a queue). The connection then reuses the request
   * frame's memory for a later frame. Leave it unset unless every path through the handler is known to copy
   * what it keeps.
   */
  readonly keepsNoRequestBytes?: boolean;
  /**
   * Handles one request. Returns the response body, or undefined for a request that gets no response
   * (Produce with acks=0). Expected failures are Kafka error codes inside the response; throwing closes
   * the connection, so throw only for requests that make no sense.
   */
  handle(request: Body, ctx: HandlerContext): Promise<Body | undefined> | Body | undefined;
}
