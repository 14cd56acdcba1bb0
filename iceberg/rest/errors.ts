/**
 * Errors as the REST spec's `IcebergErrorResponse`: `{"error": {"message", "type", "code"}}`. The `type`
 * names are the ones Iceberg's reference clients map to exceptions (NoSuchNamespaceException, ...), so an
 * engine shows the user the right error, and retries only what is retryable (409 CommitFailedException).
 */
import { CatalogError, type CatalogErrorCode } from '../catalog/catalog.js';
import { CommitConflictError } from '../table-metadata-builder.js';
import { IcebergError } from '../types.js';

export interface RestError {
  readonly status: number;
  readonly type: string;
  readonly message: string;
}

const BY_CODE: Record<CatalogErrorCode, { status: number; type: string }> = {
  NO_SUCH_NAMESPACE: { status: 404, type: 'NoSuchNamespaceException' },
  NO_SUCH_TABLE: { status: 404, type: 'NoSuchTableException' },
  ALREADY_EXISTS: { status: 409, type: 'AlreadyExistsException' },
  NAMESPACE_NOT_EMPTY: { status: 409, type: 'NamespaceNotEmptyException' },
  INVALID_IDENTIFIER: { status: 400, type: 'BadRequestException' },
  INVALID_REQUEST: { status: 400, type: 'BadRequestException' },
  FORBIDDEN: { status: 403, type: 'ForbiddenException' },
  NOT_AUTHORIZED: { status: 401, type: 'NotAuthorizedException' },
  COMMIT_STATE_UNKNOWN: { status: 500, type: 'CommitStateUnknownException' },
  UNSUPPORTED: { status: 406, type: 'UnsupportedOperationException' },
  SERVICE_ERROR: { status: 500, type: 'ServiceFailureException' },
};

/** The REST status and error type for an error thrown by a catalog or the model. */
export function toRestError(err: unknown): RestError {
  if (err instanceof RestRequestError) return { status: err.status, type: err.type, message: err.message };
  if (err instanceof CatalogError) return { ...BY_CODE[err.code], message: err.message };
  if (err instanceof CommitConflictError) return { status: 409, type: 'CommitFailedException', message: err.message };
  if (err instanceof IcebergError) {
    if (err.code === 'COMMIT_CONFLICT') return { status: 409, type: 'CommitFailedException', message: err.message };
    return { status: 400, type: 'BadRequestException', message: err.message };
  }
  return { status: 500, type: 'ServiceFailureException', message: `Internal error: ${err instanceof Error ? err.message : String(err)}` };
}

/** The spec's error body. */
export function errorBody(e: RestError): string {
  return JSON.stringify({ error: { message: e.message, type: e.type, code: e.status } });
}

/** An HTTP-level error of the server itself (routing, auth, body parsing). */
export class RestRequestError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'RestRequestError';
  }
}
