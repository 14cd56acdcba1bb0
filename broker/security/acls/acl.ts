/**
 * Kafka's ACL model as data: resource types, pattern types, operations and permissions with Kafka's codes
 * (org.apache.kafka.common.resource / .acl), ACL bindings and the filters CreateAcls, DescribeAcls and
 * DeleteAcls carry, and Kafka's matching rules for both (ResourcePatternFilter, AccessControlEntryFilter).
 */

export const ResourceType = { UNKNOWN: 0, ANY: 1, TOPIC: 2, GROUP: 3, CLUSTER: 4, TRANSACTIONAL_ID: 5, DELEGATION_TOKEN: 6, USER: 7 } as const;
export const PatternType = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const;
export const AclOperation = {
  UNKNOWN: 0,
  ANY: 1,
  ALL: 2,
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
  CREATE_TOKENS: 13,
  DESCRIBE_TOKENS: 14,
  TWO_PHASE_COMMIT: 15,
} as const;
export const AclPermission = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const;

export type ResourceTypeName = Exclude<keyof typeof ResourceType, 'UNKNOWN' | 'ANY'>;
export type OperationName = Exclude<keyof typeof AclOperation, 'UNKNOWN' | 'ANY'>;

/** The one name a CLUSTER resource has (Kafka's kafka-cluster). */
export const CLUSTER_RESOURCE = 'kafka-cluster';
/** A LITERAL resource named `*` matches every resource of its type. */
export const WILDCARD_RESOURCE = '*';
export const WILDCARD_HOST = '*';
export const WILDCARD_PRINCIPAL = 'User:*';

/** One ACL: who (principal, host) may or may not (permission) do what (operation) to which resources (pattern). */
export interface AclBinding {
  readonly resourceType: number;
  readonly resourceName: string;
  readonly patternType: number;
  readonly principal: string;
  readonly host: string;
  readonly operation: number;
  readonly permissionType: number;
}

/** A filter over bindings: null strings and ANY codes match everything; MATCH patterns match as the authorizer does. */
export interface AclBindingFilter {
  readonly resourceType: number;
  readonly resourceName: string | null;
  readonly patternType: number;
  readonly principal: string | null;
  readonly host: string | null;
  readonly operation: number;
  readonly permissionType: number;
}

const known = (table: Record<string, number>, code: number) => Object.values(table).includes(code);

/** Why a binding may not be created, as Kafka's AclControlManager.validateNewAcl and AclApis word it, or undefined. */
export function invalidBinding(b: AclBinding): string | undefined {
  if (!known(ResourceType, b.resourceType) || b.resourceType === ResourceType.UNKNOWN || b.resourceType === ResourceType.ANY) return `Invalid resourceType ${b.resourceType}`;
  if (b.patternType !== PatternType.LITERAL && b.patternType !== PatternType.PREFIXED) return `Invalid patternType ${b.patternType}`;
  if (!known(AclOperation, b.operation) || b.operation === AclOperation.UNKNOWN || b.operation === AclOperation.ANY) return `Invalid operation ${b.operation}`;
  if (b.permissionType !== AclPermission.ALLOW && b.permissionType !== AclPermission.DENY) return `Invalid permissionType ${b.permissionType}`;
  if (b.resourceName === '') return 'Invalid empty resource name';
  if (b.resourceType === ResourceType.CLUSTER && b.resourceName !== CLUSTER_RESOURCE) return `The only valid name for the CLUSTER resource is ${CLUSTER_RESOURCE}`;
  if (!b.principal.includes(':')) return `Could not parse principal from \`${b.principal}\` (no colon is present separating the principal type from the principal name)`;
  if (b.host === '') return 'Invalid empty host; use * for every host';
  return undefined;
}

/** Why a filter is not usable (it has UNKNOWN elements, or codes Kafka does not define), or undefined. */
export function invalidFilter(f: AclBindingFilter): string | undefined {
  const unknownCode =
    !known(ResourceType, f.resourceType) || !known(PatternType, f.patternType) || !known(AclOperation, f.operation) || !known(AclPermission, f.permissionType);
  const hasUnknown = f.resourceType === ResourceType.UNKNOWN || f.patternType === PatternType.UNKNOWN || f.operation === AclOperation.UNKNOWN || f.permissionType === AclPermission.UNKNOWN;
  return unknownCode || hasUnknown ? 'The filter contains UNKNOWN elements' : undefined;
}

/** Kafka's ResourcePatternFilter.matches plus AccessControlEntryFilter.matches. */
export function filterMatches(f: AclBindingFilter, b: AclBinding): boolean {
  if (f.resourceType !== ResourceType.ANY && f.resourceType !== b.resourceType) return false;
  if (f.patternType !== PatternType.ANY && f.patternType !== PatternType.MATCH && f.patternType !== b.patternType) return false;
  if (f.resourceName !== null) {
    if (f.patternType === PatternType.ANY || f.patternType === b.patternType) {
      if (f.resourceName !== b.resourceName) return false;
    } else if (b.patternType === PatternType.LITERAL) {
      if (f.resourceName !== b.resourceName && b.resourceName !== WILDCARD_RESOURCE) return false;
    } else if (!f.resourceName.startsWith(b.resourceName)) return false;
  }
  if (f.principal !== null && f.principal !== b.principal) return false;
  if (f.host !== null && f.host !== b.host) return false;
  if (f.operation !== AclOperation.ANY && f.operation !== b.operation) return false;
  return f.permissionType === AclPermission.ANY || f.permissionType === b.permissionType;
}

/** Whether the binding's resource pattern covers the resource `name` of its type (LITERAL, `*`, PREFIXED). */
export function patternCovers(b: AclBinding, name: string): boolean {
  if (b.patternType === PatternType.LITERAL) return b.resourceName === name || b.resourceName === WILDCARD_RESOURCE;
  return b.patternType === PatternType.PREFIXED && name.startsWith(b.resourceName);
}

/**
 * The operations an ALLOW of `granted` permits: itself, everything for ALL, and Kafka's implications
 * (READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS). A DENY denies only
 * its own operation (or everything, for ALL), as in Kafka.
 */
export function allowImplies(granted: number, requested: number): boolean {
  if (granted === requested || granted === AclOperation.ALL) return true;
  if (requested === AclOperation.DESCRIBE) {
    return granted === AclOperation.READ || granted === AclOperation.WRITE || granted === AclOperation.DELETE || granted === AclOperation.ALTER;
  }
  return requested === AclOperation.DESCRIBE_CONFIGS && granted === AclOperation.ALTER_CONFIGS;
}

/** The same binding (all seven fields), so creating it twice stores it once. */
export function bindingKey(b: AclBinding): string {
  return [b.resourceType, b.patternType, b.resourceName, b.principal, b.host, b.operation, b.permissionType].join('\0');
}
