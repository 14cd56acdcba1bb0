/** Helpers shared by handlers: broker identity and turning thrown errors into Kafka error codes. */
import { ErrorCode, KafkaError } from '../../protocol/error-codes.js';
import { LogError, LOG_ERRORS } from '../log/errors.js';
import type { Logger } from '../logger.js';

/** Who this broker is, as clients should see it. */
export interface BrokerIdentity {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
  readonly clusterId: string;
  /**
   * The advertised address of each listener by name; `host` and `port` are the first listener's. Clients
   * are told the address of the listener their request came in on, as Kafka tells them.
   */
  readonly endpoints?: ReadonlyMap<string, { readonly host: string; readonly port: number }>;
}

/** The address to give a client that connected through `listener`. */
export function endpointFor(identity: BrokerIdentity, listener: string | undefined): { host: string; port: number } {
  const ep = listener === undefined ? undefined : identity.endpoints?.get(listener);
  return ep ?? { host: identity.host, port: identity.port };
}

export interface ErrorResult {
  errorCode: number;
  errorMessage: string | null;
}

/**
 * The Kafka error code and message for a thrown error. Expected errors (KafkaError, LogError) keep their
 * code; anything else is a bug or a disk failure: it is logged and answered with UNKNOWN_SERVER_ERROR.
 */
export function toErrorResult(err: unknown, log: Logger, context: Record<string, unknown> = {}): ErrorResult {
  if (err instanceof KafkaError) return { errorCode: err.code, errorMessage: err.message };
  if (err instanceof LogError) return { errorCode: LOG_ERRORS[err.code].kafkaCode, errorMessage: err.message };
  log.error('unexpected error while handling a request', { ...context, err, stack: (err as Error)?.stack });
  return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: 'The broker hit an unexpected error; see its log.' };
}

/** Kafka's "not requested" value for authorized-operations fields. */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

/** With no ACLs every operation is allowed: READ..ALTER_CONFIGS as Kafka's AclOperation bit positions. */
export const ALL_TOPIC_OPERATIONS = [3, 4, 5, 6, 7, 8, 10, 11].reduce((acc, bit) => acc | (1 << bit), 0);
export const ALL_CLUSTER_OPERATIONS = [4, 5, 7, 8, 9, 10, 11, 12].reduce((acc, bit) => acc | (1 << bit), 0);
