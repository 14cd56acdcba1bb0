/**
 * Kafka's error codes (Kafka 3.9: -1 through 127), as one table. Each entry carries the wire code, Kafka's
 * name, whether Kafka clients treat the error as retriable, and a one-sentence message that says what
 * happened and what to do. Handlers use `ErrorCode.X` instead of numbers and throw `KafkaError`.
 */

interface ErrorDefinition {
  readonly code: number;
  readonly retriable: boolean;
  readonly message: string;
}

const DEFINITIONS = {
  UNKNOWN_SERVER_ERROR: { code: -1, retriable: false, message: 'The broker hit an unexpected internal error; check the broker log for the cause before retrying.' },
  NONE: { code: 0, retriable: false, message: 'No error: the operation succeeded.' },
  OFFSET_OUT_OF_RANGE: { code: 1, retriable: false, message: 'The requested offset is outside the range the partition holds; reset the position with ListOffsets (earliest or latest) and fetch again.' },
  CORRUPT_MESSAGE: { code: 2, retriable: true, message: 'A record batch failed its CRC check, has an invalid size, or has a null key on a compacted topic; resend an intact batch.' },
  UNKNOWN_TOPIC_OR_PARTITION: { code: 3, retriable: true, message: 'This broker does not host the topic-partition; refresh metadata, and create the topic if it should exist.' },
  INVALID_FETCH_SIZE: { code: 4, retriable: false, message: 'The fetch size in the request is invalid; send a positive max bytes value.' },
  LEADER_NOT_AVAILABLE: { code: 5, retriable: true, message: 'The partition has no leader right now, usually because an election is under way; refresh metadata and retry shortly.' },
  NOT_LEADER_OR_FOLLOWER: { code: 6, retriable: true, message: 'This broker is not the leader (or not a replica) of the partition; refresh metadata and send the request to the current leader.' },
  REQUEST_TIMED_OUT: { code: 7, retriable: true, message: 'The request did not complete within its timeout; retry it, possibly with a longer timeout.' },
  BROKER_NOT_AVAILABLE: { code: 8, retriable: false, message: 'The broker is not available; check that it is running and reachable.' },
  REPLICA_NOT_AVAILABLE: { code: 9, retriable: true, message: 'A replica of the partition is not available; retry after the replica comes back or refresh metadata.' },
  MESSAGE_TOO_LARGE: { code: 10, retriable: false, message: 'A record batch is larger than the broker or topic accepts; send smaller batches or raise max.message.bytes.' },
  STALE_CONTROLLER_EPOCH: { code: 11, retriable: false, message: 'The request came from a controller whose epoch is out of date; the sender must learn the new controller.' },
  OFFSET_METADATA_TOO_LARGE: { code: 12, retriable: false, message: 'The metadata string of an offset commit is too long; shorten it below offset.metadata.max.bytes.' },
  NETWORK_EXCEPTION: { code: 13, retriable: true, message: 'The connection closed before a response arrived; reconnect and retry.' },
  COORDINATOR_LOAD_IN_PROGRESS: { code: 14, retriable: true, message: 'The coordinator is still loading its state; retry the request after a short backoff.' },
  COORDINATOR_NOT_AVAILABLE: { code: 15, retriable: true, message: 'The coordinator is not available; look it up again with FindCoordinator and retry.' },
  NOT_COORDINATOR: { code: 16, retriable: true, message: 'This broker is not the coordinator for the key; find the right coordinator with FindCoordinator and resend.' },
  INVALID_TOPIC_EXCEPTION: { code: 17, retriable: false, message: 'The topic name is invalid or the operation is not allowed on this topic; use a legal name (letters, digits, ".", "_", "-", at most 249 characters).' },
  RECORD_LIST_TOO_LARGE: { code: 18, retriable: false, message: 'The record batch is larger than the segment size the topic allows; send smaller batches or raise segment.bytes.' },
  NOT_ENOUGH_REPLICAS: { code: 19, retriable: true, message: 'Fewer replicas are in sync than min.insync.replicas requires, so the write was rejected; retry once replicas catch up.' },
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: { code: 20, retriable: true, message: 'The write was appended but fewer replicas than required acknowledged it; retrying may duplicate unless the producer is idempotent.' },
  INVALID_REQUIRED_ACKS: { code: 21, retriable: false, message: 'The produce request asked for an unsupported acks value; use -1, 0 or 1.' },
  ILLEGAL_GENERATION: { code: 22, retriable: false, message: 'The group generation in the request is not the current one; rejoin the group to get the new generation.' },
  INCONSISTENT_GROUP_PROTOCOL: { code: 23, retriable: false, message: "The member's protocol type or protocols do not match the group's, or are empty; join with a protocol the group already uses." },
  INVALID_GROUP_ID: { code: 24, retriable: false, message: 'The group id is empty or otherwise invalid; configure a non-empty group id.' },
  UNKNOWN_MEMBER_ID: { code: 25, retriable: false, message: 'The coordinator does not know this member id, for example after a session timeout; rejoin the group with an empty member id.' },
  INVALID_SESSION_TIMEOUT: { code: 26, retriable: false, message: 'The session timeout is outside the range the broker allows (group.min.session.timeout.ms to group.max.session.timeout.ms); pick a value inside it.' },
  REBALANCE_IN_PROGRESS: { code: 27, retriable: false, message: 'The group is rebalancing; rejoin the group before committing or heartbeating again.' },
  INVALID_COMMIT_OFFSET_SIZE: { code: 28, retriable: false, message: 'The offset commit is too large to store; commit fewer partitions or shorter metadata at once.' },
  TOPIC_AUTHORIZATION_FAILED: { code: 29, retriable: false, message: 'The principal is not authorized for this topic operation; grant the needed ACL.' },
  GROUP_AUTHORIZATION_FAILED: { code: 30, retriable: false, message: 'The principal is not authorized for this group operation; grant the needed ACL.' },
  CLUSTER_AUTHORIZATION_FAILED: { code: 31, retriable: false, message: 'The principal is not authorized for this cluster operation; grant the needed cluster ACL.' },
  INVALID_TIMESTAMP: { code: 32, retriable: false, message: 'A record timestamp is outside the range the topic accepts; fix the producer clock or message.timestamp.*.ms settings.' },
  UNSUPPORTED_SASL_MECHANISM: { code: 33, retriable: false, message: 'The broker does not enable the requested SASL mechanism; use one of the mechanisms listed in the handshake response.' },
  ILLEGAL_SASL_STATE: { code: 34, retriable: false, message: 'The request is not allowed at this point of SASL authentication; reconnect and follow handshake then authenticate in order.' },
  UNSUPPORTED_VERSION: { code: 35, retriable: false, message: 'The broker does not support this API version; pick a version from the ApiVersions response.' },
  TOPIC_ALREADY_EXISTS: { code: 36, retriable: false, message: 'A topic with this name already exists; use it or choose another name.' },
  INVALID_PARTITIONS: { code: 37, retriable: false, message: 'The partition count is invalid (below 1, or not more than the current count when adding); request a valid number.' },
  INVALID_REPLICATION_FACTOR: { code: 38, retriable: false, message: 'The replication factor is below 1 or above the number of available brokers; request a smaller factor.' },
  INVALID_REPLICA_ASSIGNMENT: { code: 39, retriable: false, message: 'The manual replica assignment is invalid; list existing, distinct brokers for every partition.' },
  INVALID_CONFIG: { code: 40, retriable: false, message: 'A configuration name or value is invalid; correct it and resend.' },
  NOT_CONTROLLER: { code: 41, retriable: true, message: 'This broker is not the active controller; refresh metadata and send the request to the controller.' },
  INVALID_REQUEST: { code: 42, retriable: false, message: 'The request is malformed or not valid for this broker; check the client library version and the broker log for details.' },
  UNSUPPORTED_FOR_MESSAGE_FORMAT: { code: 43, retriable: false, message: "The topic's message format version does not support this request; upgrade the topic's message format." },
  POLICY_VIOLATION: { code: 44, retriable: false, message: 'The request breaks a policy configured on the broker; change the request to satisfy the policy.' },
  OUT_OF_ORDER_SEQUENCE_NUMBER: { code: 45, retriable: false, message: 'The broker received a producer sequence number with a gap; the idempotent producer must reset its sequence state or be restarted.' },
  DUPLICATE_SEQUENCE_NUMBER: { code: 46, retriable: false, message: 'The broker already has a batch with this producer sequence number; the batch is a duplicate and need not be sent again.' },
  INVALID_PRODUCER_EPOCH: { code: 47, retriable: false, message: 'The producer epoch is older than the current one, so another producer instance took over; stop using this producer.' },
  INVALID_TXN_STATE: { code: 48, retriable: false, message: 'The transactional operation is not valid in the current transaction state; abort the transaction or restart the producer.' },
  INVALID_PRODUCER_ID_MAPPING: { code: 49, retriable: false, message: 'The producer id is not the one assigned to this transactional id; call InitProducerId again.' },
  INVALID_TRANSACTION_TIMEOUT: { code: 50, retriable: false, message: 'The transaction timeout exceeds transaction.max.timeout.ms; configure a smaller transaction timeout.' },
  CONCURRENT_TRANSACTIONS: { code: 51, retriable: false, message: 'Another operation on this transaction is still completing; retry after it finishes.' },
  TRANSACTION_COORDINATOR_FENCED: { code: 52, retriable: false, message: 'The transaction coordinator that sent the markers is no longer current; the new coordinator will resend them.' },
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: { code: 53, retriable: false, message: 'The principal is not authorized to use this transactional id; grant the needed ACL.' },
  SECURITY_DISABLED: { code: 54, retriable: false, message: 'Security features are disabled on this broker; enable an authorizer or SASL before using this API.' },
  OPERATION_NOT_ATTEMPTED: { code: 55, retriable: false, message: 'The broker skipped this item because another part of the batched request failed; fix that failure and resend.' },
  KAFKA_STORAGE_ERROR: { code: 56, retriable: true, message: 'The broker failed to read or write the log on disk; retry, and check the broker disk and log if it persists.' },
  LOG_DIR_NOT_FOUND: { code: 57, retriable: false, message: "The log directory named in the request is not one of the broker's log.dirs; use a configured directory." },
  SASL_AUTHENTICATION_FAILED: { code: 58, retriable: false, message: 'SASL authentication failed; check the username, password and mechanism.' },
  UNKNOWN_PRODUCER_ID: { code: 59, retriable: false, message: "The broker has no state for this producer id, usually because the producer's records expired; the producer must reset its sequence numbers." },
  REASSIGNMENT_IN_PROGRESS: { code: 60, retriable: false, message: 'A partition reassignment is already in progress; wait for it to finish.' },
  DELEGATION_TOKEN_AUTH_DISABLED: { code: 61, retriable: false, message: 'Delegation tokens are not enabled on this cluster; configure a token secret to use them.' },
  DELEGATION_TOKEN_NOT_FOUND: { code: 62, retriable: false, message: 'The delegation token does not exist; create a new token.' },
  DELEGATION_TOKEN_OWNER_MISMATCH: { code: 63, retriable: false, message: 'The principal is not the owner or a renewer of the token; use the owning principal.' },
  DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: { code: 64, retriable: false, message: 'Delegation token requests are not allowed on plaintext, one-way TLS or token-authenticated connections; use an authenticated connection.' },
  DELEGATION_TOKEN_AUTHORIZATION_FAILED: { code: 65, retriable: false, message: 'The principal is not authorized for this delegation token operation; grant the needed ACL.' },
  DELEGATION_TOKEN_EXPIRED: { code: 66, retriable: false, message: 'The delegation token has expired; create or renew a token.' },
  INVALID_PRINCIPAL_TYPE: { code: 67, retriable: false, message: 'The principal type is not supported; use a supported type such as User.' },
  NON_EMPTY_GROUP: { code: 68, retriable: false, message: 'The group still has members, so it cannot be deleted; stop its consumers first.' },
  GROUP_ID_NOT_FOUND: { code: 69, retriable: false, message: 'The group does not exist; check the group id.' },
  FETCH_SESSION_ID_NOT_FOUND: { code: 70, retriable: true, message: 'The broker does not know this fetch session, for example after eviction; start a new full fetch session.' },
  INVALID_FETCH_SESSION_EPOCH: { code: 71, retriable: true, message: 'The fetch session epoch is not the expected one; start a new full fetch session.' },
  LISTENER_NOT_FOUND: { code: 72, retriable: true, message: 'The leader has no listener matching the one this request arrived on; refresh metadata, and check listener configuration if it persists.' },
  TOPIC_DELETION_DISABLED: { code: 73, retriable: false, message: 'Topic deletion is disabled on this cluster; enable delete.topic.enable to delete topics.' },
  FENCED_LEADER_EPOCH: { code: 74, retriable: true, message: "The request's leader epoch is older than the broker's; refresh metadata and retry with the current epoch." },
  UNKNOWN_LEADER_EPOCH: { code: 75, retriable: true, message: "The request's leader epoch is newer than the broker's; retry after the broker catches up." },
  UNSUPPORTED_COMPRESSION_TYPE: { code: 76, retriable: false, message: "The client's request version cannot read the topic's compression type; upgrade the client or change compression.type." },
  STALE_BROKER_EPOCH: { code: 77, retriable: false, message: 'The broker epoch in the request is out of date; the broker must re-register.' },
  OFFSET_NOT_AVAILABLE: { code: 78, retriable: true, message: 'The new leader has not yet caught up its high watermark after an election; retry the offset lookup shortly.' },
  MEMBER_ID_REQUIRED: { code: 79, retriable: false, message: 'The member must have a member id before joining; rejoin with the member id given in this response.' },
  PREFERRED_LEADER_NOT_AVAILABLE: { code: 80, retriable: true, message: 'The preferred leader is not available for election; retry once it is back in sync.' },
  GROUP_MAX_SIZE_REACHED: { code: 81, retriable: false, message: 'The group already has group.max.size members; stop some members or raise the limit.' },
  FENCED_INSTANCE_ID: { code: 82, retriable: false, message: 'Another member registered with the same group.instance.id; give each static member a unique instance id.' },
  ELIGIBLE_LEADERS_NOT_AVAILABLE: { code: 83, retriable: true, message: 'No eligible leader is available for the partition; retry once a replica is in sync.' },
  ELECTION_NOT_NEEDED: { code: 84, retriable: true, message: 'The partition already has the leader the election would choose; nothing needs to be done.' },
  NO_REASSIGNMENT_IN_PROGRESS: { code: 85, retriable: false, message: 'There is no partition reassignment in progress to cancel or change.' },
  GROUP_SUBSCRIBED_TO_TOPIC: { code: 86, retriable: false, message: "The group is still subscribed to the topic, so its offsets cannot be deleted; unsubscribe or stop the group first." },
  INVALID_RECORD: { code: 87, retriable: false, message: 'The broker rejected a record that failed validation (for example a missing key on a compacted topic); fix the record and resend.' },
  UNSTABLE_OFFSET_COMMIT: { code: 88, retriable: true, message: 'Some offsets are still pending in an open transaction; retry the fetch after the transaction completes.' },
  THROTTLING_QUOTA_EXCEEDED: { code: 89, retriable: true, message: 'The request exceeded a throttling quota; wait for the throttle time and retry.' },
  PRODUCER_FENCED: { code: 90, retriable: false, message: 'A newer producer with the same transactional id has fenced this one; close this producer.' },
  RESOURCE_NOT_FOUND: { code: 91, retriable: false, message: 'The request refers to a resource that does not exist; check its name.' },
  DUPLICATE_RESOURCE: { code: 92, retriable: false, message: 'The request names the same resource twice; list each resource once.' },
  UNACCEPTABLE_CREDENTIAL: { code: 93, retriable: false, message: 'The credential does not meet the acceptance criteria (for example too few iterations); supply a stronger credential.' },
  INCONSISTENT_VOTER_SET: { code: 94, retriable: false, message: 'The sender or receiver of a voter-only request is not one of the expected voters; check the quorum configuration.' },
  INVALID_UPDATE_VERSION: { code: 95, retriable: false, message: 'The requested feature update version is invalid; choose a supported version level.' },
  FEATURE_UPDATE_FAILED: { code: 96, retriable: false, message: 'The finalized features could not be updated because of a server error; check the controller log and retry.' },
  PRINCIPAL_DESERIALIZATION_FAILURE: { code: 97, retriable: false, message: 'A forwarded request principal could not be deserialized; check the cluster security setup.' },
  SNAPSHOT_NOT_FOUND: { code: 98, retriable: false, message: 'The requested metadata snapshot does not exist; ask for a snapshot the leader has.' },
  POSITION_OUT_OF_RANGE: { code: 99, retriable: false, message: 'The snapshot position is negative or past the end of the snapshot; request a position inside it.' },
  UNKNOWN_TOPIC_ID: { code: 100, retriable: true, message: 'This broker does not host a topic with this id; refresh metadata to get current topic ids.' },
  DUPLICATE_BROKER_REGISTRATION: { code: 101, retriable: false, message: 'Another broker already registered with this broker id; give each broker a unique node.id.' },
  BROKER_ID_NOT_REGISTERED: { code: 102, retriable: false, message: 'The broker id is not registered with the controller; register the broker first.' },
  INCONSISTENT_TOPIC_ID: { code: 103, retriable: true, message: "The topic id in the request does not match the log's topic id; refresh metadata and retry." },
  INCONSISTENT_CLUSTER_ID: { code: 104, retriable: false, message: "The cluster id in the request does not match this cluster's; point the node at the right cluster." },
  TRANSACTIONAL_ID_NOT_FOUND: { code: 105, retriable: false, message: 'The transactional id is not known to the coordinator; check the id.' },
  FETCH_SESSION_TOPIC_ID_ERROR: { code: 106, retriable: true, message: 'The fetch session mixed topic ids and names inconsistently; start a new full fetch session.' },
  INELIGIBLE_REPLICA: { code: 107, retriable: false, message: 'The proposed in-sync replica set contains a replica that is not eligible; propose a set of eligible replicas.' },
  NEW_LEADER_ELECTED: { code: 108, retriable: false, message: 'The partition state was updated but a new leader was elected meanwhile; the old leader must step down.' },
  OFFSET_MOVED_TO_TIERED_STORAGE: { code: 109, retriable: false, message: 'The requested offset is no longer on local disk but in tiered storage; read it from the remote tier.' },
  FENCED_MEMBER_EPOCH: { code: 110, retriable: false, message: 'The member epoch was fenced by the coordinator; release all partitions and rejoin the group with epoch 0.' },
  UNRELEASED_INSTANCE_ID: { code: 111, retriable: false, message: 'Another member still holds this instance id; wait for it to leave the group and retry.' },
  UNSUPPORTED_ASSIGNOR: { code: 112, retriable: false, message: 'The group does not support the requested server assignor; choose one the broker offers.' },
  STALE_MEMBER_EPOCH: { code: 113, retriable: false, message: 'The member epoch is stale; heartbeat again to get the current epoch and then retry.' },
  MISMATCHED_ENDPOINT_TYPE: { code: 114, retriable: false, message: 'The request reached an endpoint of the wrong type (broker or controller); send it to the right listener.' },
  UNSUPPORTED_ENDPOINT_TYPE: { code: 115, retriable: false, message: 'This endpoint type does not support the request yet; send it to a different endpoint type.' },
  UNKNOWN_CONTROLLER_ID: { code: 116, retriable: false, message: 'The controller id is not known; check the controller quorum configuration.' },
  UNKNOWN_SUBSCRIPTION_ID: { code: 117, retriable: false, message: 'The telemetry subscription id is unknown or outdated; fetch a new subscription with GetTelemetrySubscriptions.' },
  TELEMETRY_TOO_LARGE: { code: 118, retriable: false, message: 'The pushed telemetry is larger than the broker accepts; send smaller telemetry payloads.' },
  INVALID_REGISTRATION: { code: 119, retriable: false, message: 'The controller considers the broker registration invalid; fix the broker configuration and register again.' },
  TRANSACTION_ABORTABLE: { code: 120, retriable: false, message: 'The transaction hit an error it cannot complete from; abort the transaction and the transactional id stays usable.' },
  INVALID_RECORD_STATE: { code: 121, retriable: false, message: 'The record is not in a state that allows this acknowledgement; fetch the records again before acknowledging.' },
  SHARE_SESSION_NOT_FOUND: { code: 122, retriable: true, message: 'The broker does not know this share session; start a new share session.' },
  INVALID_SHARE_SESSION_EPOCH: { code: 123, retriable: true, message: 'The share session epoch is not the expected one; start a new share session.' },
  FENCED_STATE_EPOCH: { code: 124, retriable: false, message: 'The share-group state epoch did not match, so the share coordinator rejected the request; reload the state and retry.' },
  INVALID_VOTER_KEY: { code: 125, retriable: false, message: "The voter key does not match the receiving replica's key; check the voter's directory id." },
  DUPLICATE_VOTER: { code: 126, retriable: false, message: 'The voter is already part of the voter set; nothing needs to be added.' },
  VOTER_NOT_FOUND: { code: 127, retriable: false, message: 'The voter is not part of the voter set; check the voter id and directory id.' },
} as const satisfies Record<string, ErrorDefinition>;

type Definitions = typeof DEFINITIONS;

/** Kafka's name for an error, e.g. `'NOT_LEADER_OR_FOLLOWER'`. */
export type ErrorName = keyof Definitions;

/** A Kafka error code known to this table, e.g. `6`. */
export type ErrorCodeNumber = Definitions[ErrorName]['code'];

/** One row of the table. */
export interface KafkaErrorInfo {
  readonly code: number;
  readonly name: ErrorName;
  readonly retriable: boolean;
  readonly message: string;
}

const NAMES = Object.keys(DEFINITIONS) as ErrorName[];

/** Wire code by Kafka name: `ErrorCode.NOT_LEADER_OR_FOLLOWER === 6`. */
export const ErrorCode: { readonly [K in ErrorName]: Definitions[K]['code'] } = Object.freeze(
  Object.fromEntries(NAMES.map((name) => [name, DEFINITIONS[name].code])),
) as { readonly [K in ErrorName]: Definitions[K]['code'] };

/** Every error, ordered by code. */
export const KAFKA_ERRORS: readonly KafkaErrorInfo[] = Object.freeze(
  NAMES.map((name): KafkaErrorInfo => Object.freeze({ name, ...DEFINITIONS[name] })).sort((a, b) => a.code - b.code),
);

const BY_CODE: ReadonlyMap<number, KafkaErrorInfo> = new Map(KAFKA_ERRORS.map((info) => [info.code, info]));

/** The table row for a wire code, or undefined if Kafka 3.9 has no such code. */
export function errorInfo(code: number): KafkaErrorInfo | undefined {
  return BY_CODE.get(code);
}

/** The table row for a Kafka name. */
export function errorInfoByName(name: ErrorName): KafkaErrorInfo {
  return { name, ...DEFINITIONS[name] };
}

/** Whether Kafka clients retry this code; unknown codes are not retriable. */
export function isRetriable(code: number): boolean {
  return BY_CODE.get(code)?.retriable ?? false;
}

/** Kafka's name for a wire code, or `UNKNOWN_ERROR_CODE_<n>` for a code this table lacks. */
export function errorName(code: number): string {
  return BY_CODE.get(code)?.name ?? `UNKNOWN_ERROR_CODE_${code}`;
}

/**
 * An error a handler throws to answer with a Kafka error code. `message` is the detail for the response's
 * error message field (the table's message unless a more specific one is given).
 */
export class KafkaError extends Error {
  override readonly name = 'KafkaError';
  readonly code: number;
  /** Kafka's name for the code, e.g. `'UNKNOWN_MEMBER_ID'`. */
  readonly errorName: string;
  readonly retriable: boolean;

  constructor(code: number, message?: string, options?: ErrorOptions) {
    if (code === ErrorCode.NONE) {
      throw new RangeError('KafkaError needs an error code; 0 (NONE) means success, so return a normal response instead');
    }
    const info = BY_CODE.get(code);
    super(message ?? info?.message ?? `The broker answered with error code ${code}, which Kafka 3.9 does not define; upgrade or check the peer.`, options);
    this.code = code;
    this.errorName = info?.name ?? `UNKNOWN_ERROR_CODE_${code}`;
    this.retriable = info?.retriable ?? false;
  }

  /** Turns anything caught into a KafkaError: a KafkaError stays as it is, anything else is UNKNOWN_SERVER_ERROR. */
  static from(error: unknown): KafkaError {
    if (error instanceof KafkaError) return error;
    return new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, undefined, { cause: error });
  }
}
