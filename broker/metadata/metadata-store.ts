/**
 * Cluster-wide state behind one interface: topics with their ids, partition counts and configs, the
 * cluster id, producer-id allocation, SCRAM credentials, ACLs and client quotas. The embedded implementation keeps it in the data directory; a
 * multi-broker mode will put the same state in a coordination store.
 */
export interface TopicRecord {
  readonly name: string;
  /** Stable topic id (16 bytes), assigned at creation and never reused. */
  readonly id: Buffer;
  readonly partitions: number;
  /** The topic's own config overrides (defaults are not stored). */
  readonly configs: Readonly<Record<string, string>>;
  readonly createdAtMs: number;
}

/** A user's SCRAM credential: salted and hashed as RFC 5802 stores it, never the password. */
export interface ScramCredentialRecord {
  readonly user: string;
  readonly mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
  readonly salt: Buffer;
  readonly iterations: number;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
}

/** One ACL binding with Kafka's codes (broker/security/acls/acl.ts names them). */
export interface AclRecord {
  readonly resourceType: number;
  readonly resourceName: string;
  readonly patternType: number;
  readonly principal: string;
  readonly host: string;
  readonly operation: number;
  readonly permissionType: number;
}

/** One part of a client quota entity: type user, client-id or ip; a null name is the type's default entity. */
export interface QuotaEntityPart {
  readonly entityType: string;
  readonly entityName: string | null;
}

/** The quota values (producer_byte_rate, ...) set on one entity, whose parts are sorted by type. */
export interface ClientQuotaRecord {
  readonly entity: readonly QuotaEntityPart[];
  readonly values: Readonly<Record<string, number>>;
}

export interface MetadataStore {
  readonly clusterId: string;
  listTopics(): readonly TopicRecord[];
  getTopic(name: string): TopicRecord | undefined;
  getTopicById(id: Buffer): TopicRecord | undefined;
  createTopic(name: string, partitions: number, configs: Readonly<Record<string, string>>): Promise<TopicRecord>;
  deleteTopic(name: string): Promise<TopicRecord>;
  setPartitionCount(name: string, partitions: number): Promise<TopicRecord>;
  /** Sets (string) or removes (null) config overrides. */
  alterTopicConfigs(name: string, changes: Readonly<Record<string, string | null>>): Promise<TopicRecord>;
  listScramCredentials(): readonly ScramCredentialRecord[];
  getScramCredential(user: string, mechanism: ScramCredentialRecord['mechanism']): ScramCredentialRecord | undefined;
  /** Upserts and deletes SCRAM credentials in one durable change (deletions of absent ones are ignored). */
  alterScramCredentials(upserts: readonly ScramCredentialRecord[], deletions: readonly { user: string; mechanism: ScramCredentialRecord['mechanism'] }[]): Promise<void>;
  listAcls(): readonly AclRecord[];
  /** Adds and removes ACL bindings in one durable change (the caller passes no duplicates and only stored removals). */
  alterAcls(additions: readonly AclRecord[], removals: readonly AclRecord[]): Promise<void>;
  listClientQuotas(): readonly ClientQuotaRecord[];
  /**
   * Replaces the quota values of entities in one durable change: an entity whose values are empty is
   * removed. Each record's entity is in canonical form (parts sorted by type).
   */
  alterClientQuotas(records: readonly ClientQuotaRecord[]): Promise<void>;
  /** Allocates a new producer id, never handed out before (also across restarts). */
  allocateProducerId(): Promise<bigint>;
  close(): Promise<void>;
}

export class MetadataError extends Error {
  constructor(
    readonly code: 'TOPIC_EXISTS' | 'UNKNOWN_TOPIC' | 'IO_ERROR',
    message: string,
  ) {
    super(message);
    this.name = 'MetadataError';
  }
}
