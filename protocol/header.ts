/**
 * Request and response headers.
 *
 *   Request header v1:  apiKey int16, apiVersion int16, correlationId int32, clientId nullable string
 *   Request header v2:  v1 + tagged fields. clientId stays a NON-compact int16-length string (Kafka quirk).
 *   Response header v0: correlationId int32
 *   Response header v1: v0 + tagged fields
 *
 * A flexible API version uses request header v2 and response header v1, otherwise v1 and v0. ApiVersions
 * responses always use response header v0, so a client that does not yet know the broker's versions can
 * still read the answer. (Request header v0, used only by ControlledShutdown v0, is not supported.)
 */
import type { Reader } from './reader.js';
import type { Writer } from './writer.js';

export interface RequestHeader {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
}

export interface ResponseHeader {
  readonly correlationId: number;
}

export type RequestHeaderVersion = 1 | 2;
export type ResponseHeaderVersion = 0 | 1;

export const API_VERSIONS_KEY = 18;

export function requestHeaderVersion(flexible: boolean): RequestHeaderVersion {
  return flexible ? 2 : 1;
}

export function responseHeaderVersion(apiKey: number, flexible: boolean): ResponseHeaderVersion {
  return flexible && apiKey !== API_VERSIONS_KEY ? 1 : 0;
}

/** Reads the fields common to v1 and v2 (everything but the tagged-field section). */
export function readRequestHeaderFields(r: Reader): RequestHeader {
  const apiKey = r.int16();
  const apiVersion = r.int16();
  const correlationId = r.int32();
  const clientId = r.nullableString(false);
  return { apiKey, apiVersion, correlationId, clientId };
}

export function readRequestHeader(r: Reader, version: RequestHeaderVersion): RequestHeader {
  const header = readRequestHeaderFields(r);
  if (version === 2) r.taggedFields();
  return header;
}

export function writeRequestHeader(w: Writer, header: RequestHeader, version: RequestHeaderVersion): void {
  w.int16(header.apiKey).int16(header.apiVersion).int32(header.correlationId).nullableString(header.clientId ?? null, false);
  if (version === 2) w.taggedFields();
}

export function readResponseHeader(r: Reader, version: ResponseHeaderVersion): ResponseHeader {
  const correlationId = r.int32();
  if (version === 1) r.taggedFields();
  return { correlationId };
}

export function writeResponseHeader(w: Writer, header: ResponseHeader, version: ResponseHeaderVersion): void {
  w.int32(header.correlationId);
  if (version === 1) w.taggedFields();
}
