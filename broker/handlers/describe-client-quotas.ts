/**
 * DescribeClientQuotas (48) and AlterClientQuotas (49), as `kafka-configs --entity-type users|clients|ips
 * --describe` and `--alter --add-config producer_byte_rate=...` use them. Filters and validation follow
 * Kafka (broker/quotas/quota-entities.ts); quotas are stored durably in the metadata store and apply to the
 * next request. Describe needs DESCRIBE_CONFIGS on the cluster, alter ALTER_CONFIGS, as in Kafka.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { Logger } from '../logger.js';
import type { ClientQuotaRecord, QuotaEntityPart } from '../metadata/metadata-store.js';
import type { ClientQuotas } from '../quotas/client-quotas.js';
import { canonicalEntity, entityKey, matchQuotas, QuotaFilterError, validateQuotaValue, type ApiError, type FilterComponent } from '../quotas/quota-entities.js';
import { allowedOnCluster } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

export class DescribeClientQuotasHandler implements ApiHandler {
  readonly apiKey = 48;
  readonly minVersion = 0;
  readonly maxVersion = 1;

  constructor(private readonly quotas: Pick<ClientQuotas, 'list'>) {}

  handle(body: Body, ctx: HandlerContext): Body {
    if (!allowedOnCluster(ctx, 'DESCRIBE_CONFIGS')) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'The principal may not describe quotas; grant DESCRIBE_CONFIGS on the cluster.', entries: null };
    try {
      const matched = matchQuotas(this.quotas.list(), (body.components as FilterComponent[]) ?? [], body.strict === true);
      const entries = matched.map((r) => ({
        entity: r.entity.map((p) => ({ entityType: p.entityType, entityName: p.entityName })),
        values: Object.entries(r.values).sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, value]) => ({ key, value })),
      }));
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, entries };
    } catch (err) {
      if (!(err instanceof QuotaFilterError)) throw err;
      return { throttleTimeMs: 0, errorCode: err.errorCode, errorMessage: err.message, entries: null };
    }
  }
}

interface AlterEntry {
  entity: QuotaEntityPart[];
  ops: { key: string; value: number; remove: boolean }[];
}

export class AlterClientQuotasHandler implements ApiHandler {
  readonly apiKey = 49;
  readonly minVersion = 0;
  readonly maxVersion = 1;

  constructor(
    private readonly quotas: Pick<ClientQuotas, 'list' | 'alter'>,
    private readonly log: Logger,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const entries = (body.entries as AlterEntry[]) ?? [];
    const echo = (e: AlterEntry) => e.entity.map((p) => ({ entityType: p.entityType, entityName: p.entityName }));
    if (!allowedOnCluster(ctx, 'ALTER_CONFIGS')) {
      return { throttleTimeMs: 0, entries: entries.map((e) => ({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'The principal may not alter quotas; grant ALTER_CONFIGS on the cluster.', entity: echo(e) })) };
    }
    const stored = new Map(this.quotas.list().map((r) => [entityKey(r.entity), r]));
    const changed = new Map<string, ClientQuotaRecord>();
    const results: { errorCode: number; errorMessage: string | null; entity: QuotaEntityPart[] }[] = [];
    for (const e of entries) {
      const outcome = this.apply(e, stored, changed);
      results.push({ errorCode: outcome?.errorCode ?? ErrorCode.NONE, errorMessage: outcome?.errorMessage ?? null, entity: echo(e) });
    }
    if (body.validateOnly !== true && changed.size > 0) {
      try {
        await this.quotas.alter([...changed.values()]);
        this.log.info('client quotas altered', { entities: [...changed.values()].map((r) => describeEntity(r.entity)) });
      } catch (err) {
        this.log.error('could not store client quotas', { err });
        for (const r of results) if (r.errorCode === ErrorCode.NONE) Object.assign(r, { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: 'The quotas could not be stored; see the broker log and retry.' });
      }
    }
    return { throttleTimeMs: 0, entries: results };
  }

  /** Validates one entry and adds its new values to `changed`; the error when it is refused. */
  private apply(e: AlterEntry, stored: ReadonlyMap<string, ClientQuotaRecord>, changed: Map<string, ClientQuotaRecord>): ApiError | undefined {
    const canonical = canonicalEntity(e.entity);
    if (!('entity' in canonical)) return canonical;
    const key = entityKey(canonical.entity);
    if (changed.has(key)) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `The same entity ${describeEntity(canonical.entity)} appears twice in the request` };
    const values: Record<string, number> = { ...(stored.get(key)?.values ?? {}) };
    const seen = new Set<string>();
    for (const op of e.ops) {
      if (seen.has(op.key)) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Duplicate quota key ${op.key} for ${describeEntity(canonical.entity)}` };
      seen.add(op.key);
      if (op.remove) {
        delete values[op.key];
        continue;
      }
      const problem = validateQuotaValue(canonical.entity, op.key, op.value);
      if (problem !== null) return problem;
      values[op.key] = op.value;
    }
    changed.set(key, { entity: canonical.entity, values });
    return undefined;
  }
}

/** `user=alice,client-id=<default>`, for logs and messages. */
function describeEntity(entity: readonly QuotaEntityPart[]): string {
  return entity.map((p) => `${p.entityType}=${p.entityName ?? '<default>'}`).join(',');
}
