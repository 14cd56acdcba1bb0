/**
 * DescribeClientQuotas (48): Floe has no client quotas yet, so every filter matches nothing. Answered so
 * that `kafka-configs --describe --entity-type users` (which asks for quotas beside SCRAM credentials)
 * works; AlterClientQuotas is not advertised until quotas exist.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { ApiHandler, Body } from './handler.js';

export class DescribeClientQuotasHandler implements ApiHandler {
  readonly apiKey = 48;
  readonly minVersion = 0;
  readonly maxVersion = 1;

  handle(): Body {
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, entries: [] };
  }
}
