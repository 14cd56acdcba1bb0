/**
 * The one error type thrown by the protocol layer. A broker turns it into a Kafka error code (or closes the
 * connection); a client turns it into a rejected request. Decoding never throws anything else.
 */

/** What went wrong, as a stable machine-readable code. */
export type ProtocolErrorCode =
  /** The frame ended before a field did: the peer sent a short frame, or a length field is wrong. */
  | 'TRUNCATED'
  /** A length or count is negative (other than -1 for null) or points past the end of the frame. */
  | 'INVALID_LENGTH'
  /** A length, count or nesting depth exceeds the configured decode limits. */
  | 'LIMIT_EXCEEDED'
  /** The API is known but not at this version. Answer with UNSUPPORTED_VERSION (error code 35). */
  | 'UNSUPPORTED_VERSION'
  /** The API key is not declared by this project. */
  | 'UNKNOWN_API'
  /** A value cannot be represented: null in a non-nullable field, a number out of range, a bad type. */
  | 'INVALID_VALUE';

/** The request header fields known at the time of the error, so a broker can still answer. */
export interface ErrorRequestHeader {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
}

export interface ProtocolErrorDetails {
  readonly apiKey?: number;
  readonly apiVersion?: number;
  /** The decoded request header, when the error happened after it was read. */
  readonly header?: ErrorRequestHeader;
  /** Byte offset in the frame where the problem was found. */
  readonly offset?: number;
  /** Path of the field being encoded or decoded, e.g. `topicData.partitionData.index`. */
  readonly field?: string;
  readonly cause?: unknown;
}

export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  readonly code: ProtocolErrorCode;
  readonly apiKey: number | undefined;
  readonly apiVersion: number | undefined;
  readonly header: ErrorRequestHeader | undefined;
  readonly offset: number | undefined;
  readonly field: string | undefined;
  /** The message without the field suffix. */
  readonly detail: string;

  constructor(code: ProtocolErrorCode, message: string, details: ProtocolErrorDetails = {}) {
    super(details.field === undefined ? message : `${message} (field '${details.field}')`, details.cause === undefined ? undefined : { cause: details.cause });
    this.detail = message;
    this.field = details.field;
    this.code = code;
    this.header = details.header;
    this.apiKey = details.apiKey ?? details.header?.apiKey;
    this.apiVersion = details.apiVersion ?? details.header?.apiVersion;
    this.offset = details.offset;
  }

  /** A copy of this error that also names the API, version and header (used by the entry points). */
  withContext(details: ProtocolErrorDetails): ProtocolError {
    const merged: ProtocolErrorDetails = {
      apiKey: details.apiKey ?? this.apiKey,
      apiVersion: details.apiVersion ?? this.apiVersion,
      header: details.header ?? this.header,
      offset: this.offset ?? details.offset,
      field: this.field,
      cause: this.cause,
    };
    const where = merged.apiKey === undefined ? '' : ` (apiKey ${merged.apiKey} v${merged.apiVersion ?? '?'})`;
    const copy = new ProtocolError(this.code, this.detail.endsWith(where) ? this.detail : this.detail + where, merged);
    copy.stack = this.stack;
    return copy;
  }

  /** A copy of this error whose field path starts with `name` (used while unwinding nested structs). */
  inField(name: string): ProtocolError {
    const copy = new ProtocolError(this.code, this.detail, {
      apiKey: this.apiKey,
      apiVersion: this.apiVersion,
      header: this.header,
      offset: this.offset,
      field: this.field === undefined ? name : this.field.startsWith('[') ? name + this.field : `${name}.${this.field}`,
      cause: this.cause,
    });
    copy.stack = this.stack;
    return copy;
  }
}

export function isProtocolError(e: unknown): e is ProtocolError {
  return e instanceof ProtocolError;
}
