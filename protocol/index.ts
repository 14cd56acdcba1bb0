/**
 * Sans-IO entry points of the Kafka protocol layer. Frames given to the decoders are WITHOUT the 4-byte
 * size prefix (the broker's frame splitter removes it); the encoders return frames WITH it, ready for the
 * socket.
 *
 *   const { header, body } = decodeRequest(frame);          // throws ProtocolError only
 *
 * Bytes after a request body are ignored, as Apache Kafka ignores them, and reported as `trailingBytes`.
 *   socket.write(encodeResponse(header, header.apiKey, header.apiVersion, responseBody));
 *
 * When a request names an unknown API or an unsupported version, decodeRequest throws a ProtocolError
 * ('UNKNOWN_API' / 'UNSUPPORTED_VERSION') carrying the decoded header, so the broker can still answer
 * with the right correlation id.
 */
import { API_SPECS } from './messages/index.js';
import {
  readRequestHeaderFields,
  readResponseHeader,
  requestHeaderVersion,
  responseHeaderVersion,
  writeRequestHeader,
  writeResponseHeader,
  type RequestHeader,
  type RequestHeaderVersion,
  type ResponseHeader,
} from './header.js';
import { ProtocolError } from './protocol-error.js';
import { Reader, resolveLimits, type DecodeLimits } from './reader.js';
import { messageCodec, type MessageBody } from './schema/codec.js';
import type { ApiSpec, MessageSpec } from './schema/types.js';
import { inVersionRange, parseVersionRange } from './schema/versions.js';
import { Writer } from './writer.js';

export interface DecodedRequest {
  readonly header: RequestHeader;
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly body: MessageBody;
  /**
   * Bytes the frame held after the body. Apache Kafka ignores them (it parses the body and drops the rest),
   * and so does Floe: librdkafka 2.12+ sends an all-topics Metadata v12 with a null topic array written as
   * four zero bytes, three more than the compact null. The broker counts such requests.
   */
  readonly trailingBytes: number;
}

export interface DecodedRequestHeader {
  readonly header: RequestHeader;
  readonly headerVersion: RequestHeaderVersion;
  /** Offset in the frame where the body starts. */
  readonly bodyOffset: number;
}

export interface DecodedResponse {
  readonly header: ResponseHeader;
  readonly body: MessageBody;
}

export interface ApiVersionRange {
  readonly apiKey: number;
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
}

/** The protocol entry points bound to one set of API declarations. */
export interface Protocol {
  decodeRequestHeader(frame: Buffer, limits?: Partial<DecodeLimits>): DecodedRequestHeader;
  decodeRequest(frame: Buffer, limits?: Partial<DecodeLimits>): DecodedRequest;
  encodeResponse(header: ResponseHeader, apiKey: number, apiVersion: number, body: object): Buffer;
  /**
   * encodeResponse as buffers to write in order (a vectored write), with record sets of at least
   * `spliceMinBytes` referenced rather than copied: a Fetch response's segment bytes go to the socket as
   * they were read. The record buffers must stay unchanged until the chunks are written.
   */
  encodeResponseChunks(header: ResponseHeader, apiKey: number, apiVersion: number, body: object, spliceMinBytes: number): Buffer[];
  encodeRequest(header: RequestHeader, body: object): Buffer;
  decodeResponse(apiKey: number, apiVersion: number, frame: Buffer, limits?: Partial<DecodeLimits>): DecodedResponse;
  /** The versions declared for an API, or undefined if the API is not declared. */
  supportedVersions(apiKey: number): ApiVersionRange | undefined;
  /** Every declared API with its version range, by ascending API key (what ApiVersions advertises). */
  supportedApis(): ApiVersionRange[];
}

const RETAINED_WRITER_BYTES = 8 * 1024 * 1024;

/** Build the entry points over a registry of API declarations (tests pass their own). */
export function createProtocol(apis: ReadonlyMap<number, ApiSpec>): Protocol {
  const ranges = new Map<number, ApiVersionRange>();
  for (const [apiKey, spec] of apis) {
    const span = parseVersionRange(spec.request.validVersions);
    if (span.min > span.max || span.max === Infinity) {
      throw new Error(`API ${spec.name} (${apiKey}) must declare bounded validVersions, not '${spec.request.validVersions}'`);
    }
    ranges.set(apiKey, Object.freeze({ apiKey, name: spec.name, minVersion: span.min, maxVersion: span.max }));
  }
  // One writer reused across calls (encoding is synchronous). After an unusually large frame it is
  // replaced, so a single big Fetch response does not pin its memory for the life of the process.
  let writer = new Writer(64 * 1024);

  function lookup(apiKey: number, apiVersion: number, kind: 'request' | 'response', header?: RequestHeader): MessageSpec {
    const spec = apis.get(apiKey);
    if (spec === undefined) {
      throw new ProtocolError('UNKNOWN_API', `API key ${apiKey} is not supported by this broker`, { apiKey, apiVersion, header });
    }
    const message = spec[kind];
    if (!inVersionRange(message.validVersions, apiVersion)) {
      const range = ranges.get(apiKey) as ApiVersionRange;
      throw new ProtocolError('UNSUPPORTED_VERSION', `${spec.name} v${apiVersion} is not supported; supported versions are ${range.minVersion}-${range.maxVersion}`, {
        apiKey,
        apiVersion,
        header,
      });
    }
    return message;
  }

  function decodeRequestHeaderAt(r: Reader): DecodedRequestHeader & { spec: MessageSpec } {
    const header = readRequestHeaderFields(r);
    const spec = lookup(header.apiKey, header.apiVersion, 'request', header);
    const flexible = inVersionRange(spec.flexibleVersions, header.apiVersion);
    if (flexible) {
      try {
        r.taggedFields();
      } catch (e) {
        throw e instanceof ProtocolError ? e.withContext({ header }) : e;
      }
    }
    return { header, headerVersion: requestHeaderVersion(flexible), bodyOffset: r.pos, spec };
  }

  /** Finish a frame: patch the size prefix and hand out a copy the caller owns. */
  function finishFrame(): Buffer {
    writer.int32At(0, writer.length - 4);
    const frame = writer.toBuffer();
    if (writer.length > RETAINED_WRITER_BYTES) writer = new Writer(64 * 1024);
    return frame;
  }

  return {
    decodeRequestHeader(frame, limits) {
      const { header, headerVersion, bodyOffset } = decodeRequestHeaderAt(new Reader(frame, 0, frame.length, resolveLimits(limits)));
      return { header, headerVersion, bodyOffset };
    },

    decodeRequest(frame, limits) {
      const r = new Reader(frame, 0, frame.length, resolveLimits(limits));
      const { header, spec } = decodeRequestHeaderAt(r);
      let body: MessageBody;
      try {
        body = messageCodec(spec, header.apiVersion).decode(r);
      } catch (e) {
        throw e instanceof ProtocolError ? e.withContext({ header }) : e;
      }
      return { header, apiKey: header.apiKey, apiVersion: header.apiVersion, body, trailingBytes: r.remaining };
    },

    encodeResponse(header, apiKey, apiVersion, body) {
      const spec = lookup(apiKey, apiVersion, 'response');
      const codec = messageCodec(spec, apiVersion);
      writer.reset().int32(0);
      writeResponseHeader(writer, header, responseHeaderVersion(apiKey, codec.flexible));
      try {
        codec.encode(writer, body);
      } catch (e) {
        throw e instanceof ProtocolError ? e.withContext({ apiKey, apiVersion }) : e;
      }
      return finishFrame();
    },

    encodeResponseChunks(header, apiKey, apiVersion, body, spliceMinBytes) {
      const spec = lookup(apiKey, apiVersion, 'response');
      const codec = messageCodec(spec, apiVersion);
      writer.reset().spliceRecords(spliceMinBytes).int32(0);
      writeResponseHeader(writer, header, responseHeaderVersion(apiKey, codec.flexible));
      try {
        codec.encode(writer, body);
      } catch (e) {
        writer.reset();
        throw e instanceof ProtocolError ? e.withContext({ apiKey, apiVersion }) : e;
      }
      writer.int32At(0, writer.totalLength - 4);
      const chunks = writer.toChunks();
      const own = writer.length;
      // Forget the references: the writer outlives this response.
      writer.reset();
      if (own > RETAINED_WRITER_BYTES) writer = new Writer(64 * 1024);
      return chunks;
    },

    encodeRequest(header, body) {
      const spec = lookup(header.apiKey, header.apiVersion, 'request');
      const codec = messageCodec(spec, header.apiVersion);
      writer.reset().int32(0);
      writeRequestHeader(writer, header, requestHeaderVersion(codec.flexible));
      try {
        codec.encode(writer, body);
      } catch (e) {
        throw e instanceof ProtocolError ? e.withContext({ apiKey: header.apiKey, apiVersion: header.apiVersion }) : e;
      }
      return finishFrame();
    },

    decodeResponse(apiKey, apiVersion, frame, limits) {
      const spec = lookup(apiKey, apiVersion, 'response');
      const codec = messageCodec(spec, apiVersion);
      const r = new Reader(frame, 0, frame.length, resolveLimits(limits));
      try {
        const header = readResponseHeader(r, responseHeaderVersion(apiKey, codec.flexible));
        const body = codec.decode(r);
        if (r.remaining !== 0) {
          throw new ProtocolError('INVALID_LENGTH', `${r.remaining} bytes left over after the ${spec.name} v${apiVersion} response body`, { offset: r.pos });
        }
        return { header, body };
      } catch (e) {
        throw e instanceof ProtocolError ? e.withContext({ apiKey, apiVersion }) : e;
      }
    },

    supportedVersions(apiKey) {
      return ranges.get(apiKey);
    },

    supportedApis() {
      return [...ranges.values()].sort((a, b) => a.apiKey - b.apiKey);
    },
  };
}

/** The entry points over every API this project declares (`API_SPECS`). */
export const protocol: Protocol = createProtocol(API_SPECS);

export const decodeRequestHeader = protocol.decodeRequestHeader;
export const decodeRequest = protocol.decodeRequest;
export const encodeResponse = protocol.encodeResponse;
export const encodeResponseChunks = protocol.encodeResponseChunks;
export const encodeRequest = protocol.encodeRequest;
export const decodeResponse = protocol.decodeResponse;
export const supportedVersions = protocol.supportedVersions;
export const supportedApis = protocol.supportedApis;

export { ProtocolError, isProtocolError, type ProtocolErrorCode, type ErrorRequestHeader } from './protocol-error.js';
export { Reader, DEFAULT_DECODE_LIMITS, resolveLimits, type DecodeLimits } from './reader.js';
export { Writer } from './writer.js';
export {
  requestHeaderVersion,
  responseHeaderVersion,
  type RequestHeader,
  type ResponseHeader,
  type RequestHeaderVersion,
  type ResponseHeaderVersion,
} from './header.js';
export { messageCodec, decodeMessage, encodeMessage, type MessageBody, type MessageCodec } from './schema/codec.js';
export { defaultValue, isDefaultValue, valueEquals } from './schema/defaults.js';
export { parseVersionRange, inVersionRange, listVersions, type VersionSpan } from './schema/versions.js';
