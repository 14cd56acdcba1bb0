/**
 * The registry's errors, one table: each carries the HTTP status and Confluent's `error_code`, so every
 * client library that branches on them (404 + 40401, 409, 422 + 42201, ...) sees what Confluent's own
 * registry answers. The body is always `{"error_code": N, "message": "..."}`.
 */

export const REGISTRY_ERRORS = Object.freeze({
  SUBJECT_NOT_FOUND: { status: 404, code: 40401 },
  VERSION_NOT_FOUND: { status: 404, code: 40402 },
  SCHEMA_NOT_FOUND: { status: 404, code: 40403 },
  SUBJECT_SOFT_DELETED: { status: 404, code: 40404 },
  SUBJECT_NOT_SOFT_DELETED: { status: 404, code: 40405 },
  VERSION_SOFT_DELETED: { status: 404, code: 40406 },
  VERSION_NOT_SOFT_DELETED: { status: 404, code: 40407 },
  SUBJECT_COMPATIBILITY_NOT_CONFIGURED: { status: 404, code: 40408 },
  SUBJECT_MODE_NOT_CONFIGURED: { status: 404, code: 40409 },
  UNAUTHORIZED: { status: 401, code: 401 },
  FORBIDDEN: { status: 403, code: 40301 },
  NOT_FOUND: { status: 404, code: 404 },
  METHOD_NOT_ALLOWED: { status: 405, code: 405 },
  INCOMPATIBLE_SCHEMA: { status: 409, code: 409 },
  PAYLOAD_TOO_LARGE: { status: 413, code: 413 },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, code: 415 },
  INVALID_SCHEMA: { status: 422, code: 42201 },
  INVALID_VERSION: { status: 422, code: 42202 },
  INVALID_COMPATIBILITY_LEVEL: { status: 422, code: 42203 },
  INVALID_MODE: { status: 422, code: 42204 },
  OPERATION_NOT_PERMITTED: { status: 422, code: 42205 },
  REFERENCE_EXISTS: { status: 422, code: 42206 },
  ID_DOES_NOT_MATCH: { status: 422, code: 42207 },
  INVALID_SUBJECT: { status: 422, code: 42208 },
  UNPROCESSABLE: { status: 422, code: 422 },
  BAD_REQUEST: { status: 400, code: 400 },
  STORE_ERROR: { status: 500, code: 50001 },
  JSON_PARSE: { status: 400, code: 50005 },
} as const);

export type RegistryErrorKind = keyof typeof REGISTRY_ERRORS;

export class RegistryError extends Error {
  override readonly name = 'RegistryError';
  readonly status: number;
  readonly errorCode: number;

  constructor(
    readonly kind: RegistryErrorKind,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.status = REGISTRY_ERRORS[kind].status;
    this.errorCode = REGISTRY_ERRORS[kind].code;
  }

  toBody(): { error_code: number; message: string } {
    return { error_code: this.errorCode, message: this.message };
  }
}

export const subjectNotFound = (subject: string): RegistryError => new RegistryError('SUBJECT_NOT_FOUND', `Subject '${subject}' not found.`);
export const versionNotFound = (version: number | string): RegistryError => new RegistryError('VERSION_NOT_FOUND', `Version ${version} not found.`);
export const schemaNotFound = (id?: number): RegistryError => new RegistryError('SCHEMA_NOT_FOUND', id === undefined ? 'Schema not found' : `Schema ${id} not found`);
export const invalidSchema = (message: string): RegistryError => new RegistryError('INVALID_SCHEMA', `Invalid schema: ${message}`);
