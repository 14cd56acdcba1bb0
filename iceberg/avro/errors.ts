/** The error type of Avro metadata files (manifests, manifest lists). `code` is stable; the message says what to fix. */
export type AvroErrorCode = 'INVALID_AVRO' | 'INVALID_MANIFEST' | 'UNSUPPORTED_FORMAT_VERSION' | 'UNSUPPORTED_TYPE';

export class AvroError extends Error {
  constructor(
    readonly code: AvroErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AvroError';
  }
}
