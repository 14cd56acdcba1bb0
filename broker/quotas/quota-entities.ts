/**
 * Client quota entities as Kafka defines them: an entity is a user, a client id, a user and client id, or an
 * IP address; a null name is that type's default entity (`--entity-default`). This file holds the rules
 * without any storage: which keys each entity takes and how they are validated (Kafka's
 * ClientQuotaControlManager), which stored entity applies to a request (Kafka's DefaultQuotaCallback order),
 * and how DescribeClientQuotas filters match (exact, default, any; strict).
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { ClientQuotaRecord, QuotaEntityPart } from '../metadata/metadata-store.js';

export const USER = 'user';
export const CLIENT_ID = 'client-id';
export const IP = 'ip';

export const PRODUCER_BYTE_RATE = 'producer_byte_rate';
export const CONSUMER_BYTE_RATE = 'consumer_byte_rate';
export const REQUEST_PERCENTAGE = 'request_percentage';
export const CONTROLLER_MUTATION_RATE = 'controller_mutation_rate';
export const CONNECTION_CREATION_RATE = 'connection_creation_rate';

type KeyType = 'long' | 'double' | 'int';

/** The keys a user, client-id or user+client-id entity takes, with their types (Kafka's QuotaConfigs). */
const CLIENT_KEYS: ReadonlyMap<string, KeyType> = new Map<string, KeyType>([
  [PRODUCER_BYTE_RATE, 'long'],
  [CONSUMER_BYTE_RATE, 'long'],
  [REQUEST_PERCENTAGE, 'double'],
  [CONTROLLER_MUTATION_RATE, 'double'],
]);
/** The keys an ip entity takes. */
const IP_KEYS: ReadonlyMap<string, KeyType> = new Map<string, KeyType>([[CONNECTION_CREATION_RATE, 'int']]);

export interface ApiError {
  readonly errorCode: number;
  readonly errorMessage: string;
}

const invalid = (errorMessage: string): ApiError => ({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage });

/** The entity with its parts sorted by type, or an error for an entity Kafka refuses. */
export function canonicalEntity(parts: readonly QuotaEntityPart[]): { entity: QuotaEntityPart[] } | ApiError {
  if (parts.length === 0) return invalid('Invalid empty client quota entity');
  const seen = new Set<string>();
  for (const p of parts) {
    if (seen.has(p.entityType)) return invalid(`Invalid empty client quota entity, duplicate entity entry ${p.entityType}`);
    seen.add(p.entityType);
    if (p.entityType !== USER && p.entityType !== CLIENT_ID && p.entityType !== IP) return invalid(`Unhandled client quota entity type: ${p.entityType}; use user, client-id or ip`);
    if (p.entityName !== null && p.entityName === '') return invalid(`Empty ${p.entityType} not supported; use a name or the default entity`);
  }
  if (seen.has(IP) && seen.size > 1) return invalid('Invalid client quota entity: ip cannot be combined with user or client-id');
  if (seen.has(IP)) {
    const ip = parts[0]?.entityName ?? null;
    if (ip !== null && !isIpAddress(ip)) return invalid(`${ip} is not a valid IP or resolvable host.`);
  }
  return { entity: [...parts].map((p) => ({ entityType: p.entityType, entityName: p.entityName })).sort((a, b) => (a.entityType < b.entityType ? -1 : a.entityType > b.entityType ? 1 : 0)) };
}

/** IPv4 or IPv6 literals (Floe resolves no host names for quota entities). */
function isIpAddress(s: string): boolean {
  if (/^(\d{1,3})(\.\d{1,3}){3}$/.test(s)) return s.split('.').every((o) => Number(o) <= 255);
  return s.includes(':') && /^[0-9a-fA-F:.]+$/.test(s);
}

/** Validates one quota value for an entity (canonical), as Kafka does; null when it is acceptable. */
export function validateQuotaValue(entity: readonly QuotaEntityPart[], key: string, value: number): ApiError | null {
  const keys = entity.some((p) => p.entityType === IP) ? IP_KEYS : CLIENT_KEYS;
  const type = keys.get(key);
  if (type === undefined) return invalid(`Invalid configuration key ${key}; ${entity.some((p) => p.entityType === IP) ? 'an ip entity takes' : 'user and client-id entities take'} ${[...keys.keys()].join(', ')}`);
  if (!Number.isFinite(value)) return invalid(`Configuration ${key} must be a finite number`);
  if (value < 0) return invalid(`Configuration ${key} must not be negative, but is ${value}`);
  if (type !== 'double' && Math.abs(Math.trunc(value + 1e-6) - value) > 1e-6) return invalid(`Configuration ${key} must be a ${type === 'long' ? 'Long' : 'Integer'} value`);
  if (type === 'int' && value > 2147483647) return invalid(`Configuration ${key} must be an Integer value`);
  return null;
}

export interface ResolvedQuota {
  /** The quota in the key's unit (bytes per second for the byte rates). */
  readonly bound: number;
  /**
   * Who shares the rate: Kafka's metric tags. A quota found on a user+client-id entity (or its defaults) is
   * shared by that user and client id, one on a user entity by all of that user's clients, one on a
   * client-id entity by all users of that client id.
   */
  readonly user: string;
  readonly clientId: string;
}

/** Stored quotas indexed for lookups on the request path. */
export class QuotaIndex {
  private readonly byEntity = new Map<string, Readonly<Record<string, number>>>();

  constructor(records: readonly ClientQuotaRecord[]) {
    for (const r of records) this.byEntity.set(entityKey(r.entity), r.values);
  }

  get size(): number {
    return this.byEntity.size;
  }

  /** Whether any entity sets this key (the request path skips quotas entirely otherwise). */
  has(key: string): boolean {
    for (const v of this.byEntity.values()) if (key in v) return true;
    return false;
  }

  /**
   * The quota that applies to a request of `user` (the principal's name) with `clientId`, in Kafka's order:
   * /users/<user>/clients/<client-id>, /users/<user>/clients/<default>, /users/<user>,
   * /users/<default>/clients/<client-id>, /users/<default>/clients/<default>, /users/<default>,
   * /clients/<client-id>, /clients/<default>.
   */
  resolve(key: string, user: string, clientId: string): ResolvedQuota | undefined {
    const candidates: [string | null | undefined, string | null | undefined, boolean, boolean][] = [
      [user, clientId, true, true],
      [user, null, true, true],
      [user, undefined, true, false],
      [null, clientId, true, true],
      [null, null, true, true],
      [null, undefined, true, false],
      [undefined, clientId, false, true],
      [undefined, null, false, true],
    ];
    for (const [u, c, tagUser, tagClient] of candidates) {
      const parts: QuotaEntityPart[] = [];
      if (c !== undefined) parts.push({ entityType: CLIENT_ID, entityName: c });
      if (u !== undefined) parts.push({ entityType: USER, entityName: u });
      const bound = this.byEntity.get(entityKey(parts))?.[key];
      if (bound !== undefined) return { bound, user: tagUser ? user : '', clientId: tagClient ? clientId : '' };
    }
    return undefined;
  }
}

/** A canonical entity as a map key. */
export function entityKey(entity: readonly QuotaEntityPart[]): string {
  return JSON.stringify(entity.map((p) => [p.entityType, p.entityName]));
}

export interface FilterComponent {
  readonly entityType: string;
  /** 0: exact name, 1: the default entity, 2: any entity of the type. */
  readonly matchType: number;
  readonly match: string | null;
}

export class QuotaFilterError extends Error {
  constructor(
    readonly errorCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'QuotaFilterError';
  }
}

/**
 * The stored entities a DescribeClientQuotas filter matches, as Kafka's ClientQuotasImage.describe: every
 * component must match one part of the entity; with `strict` the entity has no other parts; no components
 * and not strict matches everything. Throws QuotaFilterError for a filter Kafka refuses.
 */
export function matchQuotas(records: readonly ClientQuotaRecord[], components: readonly FilterComponent[], strict: boolean): ClientQuotaRecord[] {
  const seen = new Set<string>();
  for (const c of components) {
    if (c.entityType === '') throw new QuotaFilterError(ErrorCode.INVALID_REQUEST, 'Invalid empty entity type.');
    if (seen.has(c.entityType)) throw new QuotaFilterError(ErrorCode.INVALID_REQUEST, `Entity type ${c.entityType} cannot appear more than once in the filter.`);
    seen.add(c.entityType);
    if (c.entityType !== USER && c.entityType !== CLIENT_ID && c.entityType !== IP) throw new QuotaFilterError(ErrorCode.UNSUPPORTED_VERSION, `Unsupported entity type ${c.entityType}`);
    if (c.matchType === 0 && c.match === null) throw new QuotaFilterError(ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_EXACT, but set match string to null.');
    if (c.matchType === 1 && c.match !== null) throw new QuotaFilterError(ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_DEFAULT, but also specified a match string.');
    if (c.matchType === 2 && c.match !== null) throw new QuotaFilterError(ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.');
    if (c.matchType < 0 || c.matchType > 2) throw new QuotaFilterError(ErrorCode.INVALID_REQUEST, `Unknown match type ${c.matchType}`);
  }
  if (seen.has(IP) && (seen.has(USER) || seen.has(CLIENT_ID))) {
    throw new QuotaFilterError(ErrorCode.INVALID_REQUEST, 'Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.');
  }
  if (components.length === 0) return strict ? [] : [...records];
  return records.filter((r) => {
    if (strict && r.entity.length !== components.length) return false;
    return components.every((c) => {
      const part = r.entity.find((p) => p.entityType === c.entityType);
      if (part === undefined) return false;
      return c.matchType === 2 || part.entityName === (c.matchType === 1 ? null : c.match);
    });
  });
}
