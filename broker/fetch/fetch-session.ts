/**
 * Fetch sessions (KIP-227, Fetch v7+). Floe keeps no session cache, which Kafka allows: it is what a Kafka
 * broker with `max.incremental.fetch.session.cache.slots=0` does (FetchManager.newContext):
 *
 * - a full fetch (sessionEpoch 0 = "open a session", or -1 = "no session") gets a full, error-free response
 *   with sessionId 0, meaning "no session was created"; the client keeps sending full fetches;
 * - an incremental fetch (sessionEpoch > 0) names a session we cannot have: FETCH_SESSION_ID_NOT_FOUND,
 *   after which clients fall back to a full fetch;
 * - a full fetch that names a session (sessionId != 0, epoch 0 or -1) closes that session in Kafka; with
 *   none to close it is answered like any full fetch.
 *
 * Sessions only save request and response bytes; every answer here is complete and correct.
 */
import { ErrorCode } from '../../protocol/error-codes.js';

/** Kafka's FetchMetadata constants. */
export const INITIAL_EPOCH = 0;
export const FINAL_EPOCH = -1;
export const NO_SESSION_ID = 0;

export type FetchContext = { readonly kind: 'full'; readonly sessionId: number } | { readonly kind: 'error'; readonly errorCode: number; readonly message: string };

export function fetchContext(apiVersion: number, sessionId: number, sessionEpoch: number): FetchContext {
  if (apiVersion < 7 || sessionEpoch === INITIAL_EPOCH || sessionEpoch === FINAL_EPOCH) return { kind: 'full', sessionId: NO_SESSION_ID };
  return {
    kind: 'error',
    errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
    message: `fetch session ${sessionId} does not exist (this broker creates none); send a full fetch with sessionEpoch 0 or -1`,
  };
}
