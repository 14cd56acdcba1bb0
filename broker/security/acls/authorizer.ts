/**
 * The ACL authorizer (Kafka's StandardAuthorizer semantics): super users pass; otherwise a matching DENY
 * wins over any ALLOW; an ALLOW matches its operation, ALL, or an operation it implies; a resource no ACL
 * names at all is allowed only with allow.everyone.if.no.acl.found. ACLs match a principal exactly or
 * through `User:*`, a host exactly or through `*`, and a resource through LITERAL (or the `*` wildcard) and
 * PREFIXED patterns. Bindings live in the MetadataStore, so they are durable and move with the data.
 */
import type { BrokerConfig } from '../../config/settings.js';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import {
  AclOperation,
  AclPermission,
  allowImplies,
  bindingKey,
  filterMatches,
  invalidBinding,
  patternCovers,
  PatternType,
  ResourceType,
  WILDCARD_HOST,
  WILDCARD_PRINCIPAL,
  WILDCARD_RESOURCE,
  type AclBinding,
  type AclBindingFilter,
  type OperationName,
  type ResourceTypeName,
} from './acl.js';

/** Resource names whose covering bindings are remembered between ACL changes. */
const COVERING_CACHE_ENTRIES = 10_000;

/** The result of one CreateAcls creation: undefined when created (or already there), else why not. */
export type CreateResult = string | undefined;

export class AclAuthorizer {
  private readonly superUsers: ReadonlySet<string>;
  private readonly allowIfNoAcl: boolean;
  /** The stored bindings by resource type, rebuilt on every change (checks far outnumber changes). */
  private byType = new Map<number, AclBinding[]>();
  /** The bindings covering each (type, name) asked about, until the next change (bounded: cleared when full). */
  private covering = new Map<string, readonly AclBinding[]>();
  /** Creations and deletions run one at a time, so each sees the one before (no duplicate from two racing creates). */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly metadata: MetadataStore,
    config: Pick<BrokerConfig, 'super.users' | 'allow.everyone.if.no.acl.found'>,
  ) {
    this.superUsers = new Set(config['super.users'].split(';').map((u) => u.trim()).filter((u) => u !== ''));
    this.allowIfNoAcl = config['allow.everyone.if.no.acl.found'];
    this.index();
  }

  isSuperUser(principal: string): boolean {
    return this.superUsers.has(principal);
  }

  /** Whether `principal` connecting from `host` may perform `operation` on the resource. */
  authorize(principal: string, host: string, operation: OperationName, resourceType: ResourceTypeName, name: string): boolean {
    if (this.superUsers.has(principal)) return true;
    const op = AclOperation[operation];
    const candidates = this.coveringOf(ResourceType[resourceType], name);
    if (candidates.length === 0) return this.allowIfNoAcl;
    let allowed = false;
    for (const b of candidates) {
      if (b.principal !== principal && b.principal !== WILDCARD_PRINCIPAL) continue;
      if (b.host !== host && b.host !== WILDCARD_HOST) continue;
      if (b.permissionType === AclPermission.DENY) {
        if (b.operation === op || b.operation === AclOperation.ALL) return false;
      } else if (!allowed && allowImplies(b.operation, op)) allowed = true;
    }
    return allowed;
  }

  /**
   * Whether `principal` may perform `operation` on some resource of the type (Kafka's authorizeByResourceType,
   * used for idempotent produce without IDEMPOTENT_WRITE on the cluster). As in Kafka: what `authorize` allows
   * for an arbitrary name passes (super users, allow.everyone.if.no.acl.found); a DENY on `*` refuses; else
   * some ALLOW of exactly this operation (or ALL) must not be voided by a LITERAL DENY of the same name or a
   * PREFIXED DENY of a prefix of it.
   */
  authorizeAny(principal: string, host: string, operation: OperationName, resourceType: ResourceTypeName): boolean {
    if (this.authorize(principal, host, operation, resourceType, 'hardcode')) return true;
    const op = AclOperation[operation];
    const mine = (this.byType.get(ResourceType[resourceType]) ?? []).filter(
      (b) => (b.principal === principal || b.principal === WILDCARD_PRINCIPAL) && (b.host === host || b.host === WILDCARD_HOST) && (b.operation === op || b.operation === AclOperation.ALL),
    );
    const denies = mine.filter((b) => b.permissionType === AclPermission.DENY);
    if (denies.some((d) => d.patternType === PatternType.LITERAL && d.resourceName === WILDCARD_RESOURCE)) return false;
    const allows = mine.filter((b) => b.permissionType === AclPermission.ALLOW);
    if (allows.some((a) => a.patternType === PatternType.LITERAL && a.resourceName === WILDCARD_RESOURCE)) return true;
    return allows.some(
      (a) =>
        !denies.some((d) =>
          d.patternType === PatternType.PREFIXED ? a.resourceName.startsWith(d.resourceName) : a.patternType === PatternType.LITERAL && d.resourceName === a.resourceName,
        ),
    );
  }

  /** Creates the bindings in one durable change; one result per binding, in order. */
  create(bindings: readonly AclBinding[]): Promise<CreateResult[]> {
    return this.serialize(() => this.createNow(bindings));
  }

  private async createNow(bindings: readonly AclBinding[]): Promise<CreateResult[]> {
    const existing = new Set(this.metadata.listAcls().map(bindingKey));
    const results: CreateResult[] = [];
    const additions: AclBinding[] = [];
    for (const b of bindings) {
      const problem = invalidBinding(b);
      results.push(problem);
      if (problem !== undefined) continue;
      const key = bindingKey(b);
      if (existing.has(key)) continue;
      existing.add(key);
      additions.push(b);
    }
    if (additions.length > 0) {
      await this.metadata.alterAcls(additions, []);
      this.index();
    }
    return results;
  }

  describe(filter: AclBindingFilter): AclBinding[] {
    return this.metadata.listAcls().filter((b) => filterMatches(filter, b));
  }

  /** Deletes every binding matching any filter in one durable change; the bindings each filter matched. */
  delete(filters: readonly AclBindingFilter[]): Promise<AclBinding[][]> {
    return this.serialize(() => this.deleteNow(filters));
  }

  private async deleteNow(filters: readonly AclBindingFilter[]): Promise<AclBinding[][]> {
    const stored = this.metadata.listAcls();
    const matched = filters.map((f) => stored.filter((b) => filterMatches(f, b)));
    const removals = [...new Set(matched.flat())];
    if (removals.length > 0) {
      await this.metadata.alterAcls([], removals);
      this.index();
    }
    return matched;
  }

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private coveringOf(type: number, name: string): readonly AclBinding[] {
    const key = `${type}\0${name}`;
    let found = this.covering.get(key);
    if (found === undefined) {
      found = (this.byType.get(type) ?? []).filter((b) => patternCovers(b, name));
      if (this.covering.size >= COVERING_CACHE_ENTRIES) this.covering.clear();
      this.covering.set(key, found);
    }
    return found;
  }

  private index(): void {
    const byType = new Map<number, AclBinding[]>();
    for (const b of this.metadata.listAcls()) {
      const list = byType.get(b.resourceType) ?? [];
      list.push(b);
      byType.set(b.resourceType, list);
    }
    this.byType = byType;
    this.covering = new Map();
  }
}

/** The configured authorizer, or undefined when authorizer.class.name is empty (no authorization). */
export function authorizerFor(config: BrokerConfig, metadata: MetadataStore): AclAuthorizer | undefined {
  return config['authorizer.class.name'] === '' ? undefined : new AclAuthorizer(metadata, config);
}
