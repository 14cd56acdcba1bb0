/**
 * What handlers ask: may this request's principal do this to that resource? The router binds one Access
 * to each request (principal and client host of its connection); with no authorizer configured, handlers
 * get none and every check passes, which is Floe's behaviour without `authorizer.class.name`.
 */
import type { ConnectionInfo } from '../../server/connection.js';
import type { OperationName, ResourceTypeName } from './acl.js';
import type { AclAuthorizer } from './authorizer.js';
import { CLUSTER_RESOURCE } from './acl.js';

export interface Access {
  /** `quiet`: a check that only filters what is shown (Kafka's logIfDenied=false), so a refusal is not logged. */
  allowed(operation: OperationName, resourceType: ResourceTypeName, name: string, quiet?: boolean): boolean;
  /** Allowed on some resource of the type (Kafka's authorizeByResourceType). */
  allowedOnAny(operation: OperationName, resourceType: ResourceTypeName): boolean;
}

/**
 * The client's IP from a connection's `address:port`, as Kafka compares it with ACL hosts (Java's
 * getHostAddress): no port, no brackets, IPv4 without the ::ffff: prefix of an IPv4-mapped address.
 */
export function clientHost(remoteAddress: string): string {
  const ip = remoteAddress.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  return ip.toLowerCase().startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}

/** A refused operation, as the authorizer log reports it (Kafka's kafka.authorizer.logger line). */
export interface Denial {
  readonly principal: string;
  readonly host: string;
  readonly operation: OperationName;
  readonly resourceType: ResourceTypeName;
  readonly resource: string;
}

export function accessFor(authorizer: AclAuthorizer, conn: ConnectionInfo, onDenied?: (d: Denial) => void): Access {
  const host = clientHost(conn.remoteAddress);
  return {
    allowed: (operation, resourceType, name, quiet = false) => {
      const principal = conn.security.principal;
      const ok = authorizer.authorize(principal, host, operation, resourceType, name);
      if (!ok && !quiet) onDenied?.({ principal, host, operation, resourceType, resource: name });
      return ok;
    },
    allowedOnAny: (operation, resourceType) => authorizer.authorizeAny(conn.security.principal, host, operation, resourceType),
  };
}

/** The checks handlers make, passing when the request carries no Access (no authorizer configured). */
export function allowed(ctx: { readonly access?: Access | undefined }, operation: OperationName, resourceType: ResourceTypeName, name: string): boolean {
  return ctx.access === undefined || ctx.access.allowed(operation, resourceType, name);
}

/** A check that only decides what is shown (listing topics, groups, transactions): a refusal is not logged. */
export function visible(ctx: { readonly access?: Access | undefined }, operation: OperationName, resourceType: ResourceTypeName, name: string): boolean {
  return ctx.access === undefined || ctx.access.allowed(operation, resourceType, name, true);
}

/** `quiet` for a cluster check that has a fallback (CREATE on the cluster, else on the topic). */
export function allowedOnCluster(ctx: { readonly access?: Access | undefined }, operation: OperationName, quiet = false): boolean {
  return ctx.access === undefined || ctx.access.allowed(operation, 'CLUSTER', CLUSTER_RESOURCE, quiet);
}

export function allowedOnAny(ctx: { readonly access?: Access | undefined }, operation: OperationName, resourceType: ResourceTypeName): boolean {
  return ctx.access === undefined || ctx.access.allowedOnAny(operation, resourceType);
}

const OPERATION_BY_CODE = new Map<number, OperationName>(
  (['ALL', 'READ', 'WRITE', 'CREATE', 'DELETE', 'ALTER', 'DESCRIBE', 'CLUSTER_ACTION', 'DESCRIBE_CONFIGS', 'ALTER_CONFIGS', 'IDEMPOTENT_WRITE', 'CREATE_TOKENS', 'DESCRIBE_TOKENS', 'TWO_PHASE_COMMIT'] as const).map(
    (name, i) => [i + 2, name],
  ),
);

/** The `*AuthorizedOperations` bit field: the bits of `all` (AclOperation codes) the principal is allowed. */
export function authorizedOperations(ctx: { readonly access?: Access | undefined }, resourceType: ResourceTypeName, name: string, all: number): number {
  if (ctx.access === undefined) return all;
  let bits = 0;
  for (const [code, op] of OPERATION_BY_CODE) if ((all & (1 << code)) !== 0 && ctx.access.allowed(op, resourceType, name, true)) bits |= 1 << code;
  return bits;
}
